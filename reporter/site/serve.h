// A small static HTTP server for previewing a site, like `asv preview`:
// 127.0.0.1 only, GET and HEAD, one request per connection. Paths are
// decoded and confined to the site root; directories serve index.html.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>

namespace torchgauge::reporter {

// Serves `root` on 127.0.0.1:`port` (0 picks a free port) until `stop` turns
// true (checked between connections, at least once a second). Calls
// `on_ready(port)` once listening. Throws std::runtime_error if it cannot bind.
void Serve(const std::filesystem::path& root, int port, const std::function<void(int)>& on_ready,
           const std::atomic<bool>* stop = nullptr);

// Maps a request target ("/builds/x/index.html?q") to a file under `root`, or
// returns an empty path when it is outside the root or malformed.
std::filesystem::path ResolveRequest(const std::filesystem::path& root, const std::string& target);

}  // namespace torchgauge::reporter
