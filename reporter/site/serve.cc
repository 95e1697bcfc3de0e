#include "reporter/site/serve.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace fs = std::filesystem;

namespace torchgauge::reporter {

namespace {
int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

const char* ContentType(const fs::path& p) {
  std::string e = p.extension().string();
  if (e == ".html") return "text/html; charset=utf-8";
  if (e == ".md") return "text/markdown; charset=utf-8";
  if (e == ".css") return "text/css; charset=utf-8";
  if (e == ".js") return "text/javascript; charset=utf-8";
  if (e == ".json") return "application/json";
  if (e == ".svg") return "image/svg+xml";
  if (e == ".atom") return "application/atom+xml";
  if (e == ".png") return "image/png";
  if (e == ".csv") return "text/csv; charset=utf-8";
  if (e == ".tex") return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

void SendAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    off += static_cast<size_t>(n);
  }
}

void Respond(int fd, int code, const char* reason, const char* type, const std::string& body, bool head) {
  std::ostringstream h;
  h << "HTTP/1.0 " << code << " " << reason << "\r\nContent-Type: " << type << "\r\nContent-Length: " << body.size()
    << "\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
  SendAll(fd, h.str());
  if (!head) SendAll(fd, body);
}

void Handle(int fd, const fs::path& root) {
  std::string req;
  char buf[4096];
  while (req.find("\r\n\r\n") == std::string::npos && req.size() < 65536) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) return;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    req.append(buf, static_cast<size_t>(n));
  }
  std::istringstream line(req.substr(0, req.find("\r\n")));
  std::string method, target;
  line >> method >> target;
  bool head = method == "HEAD";
  if (method != "GET" && !head)
    return Respond(fd, 405, "Method Not Allowed", "text/plain", "method not allowed\n", false);
  fs::path file = ResolveRequest(root, target);
  std::error_code ec;
  if (file.empty() || !fs::is_regular_file(file, ec)) {
    return Respond(fd, 404, "Not Found", "text/plain", "not found\n", head);
  }
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  Respond(fd, 200, "OK", ContentType(file), ss.str(), head);
}
}  // namespace

fs::path ResolveRequest(const fs::path& root, const std::string& target) {
  std::string path = target.substr(0, target.find_first_of("?#"));
  std::string decoded;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%') {
      if (i + 2 >= path.size() || Hex(path[i + 1]) < 0 || Hex(path[i + 2]) < 0) return {};
      decoded += static_cast<char>(Hex(path[i + 1]) * 16 + Hex(path[i + 2]));
      i += 2;
    } else {
      decoded += path[i];
    }
  }
  if (decoded.empty() || decoded[0] != '/' || decoded.find('\0') != std::string::npos) return {};
  // Reject any dot segment outright rather than normalising it.
  std::string seg;
  std::istringstream parts(decoded);
  while (std::getline(parts, seg, '/')) {
    if (seg == "." || seg == ".." || seg.find('\\') != std::string::npos) return {};
  }
  std::error_code ec;
  fs::path base = fs::weakly_canonical(root, ec);
  fs::path p = base / decoded.substr(1);
  if (decoded.back() == '/' || fs::is_directory(p, ec)) p /= "index.html";
  fs::path real = fs::weakly_canonical(p, ec);
  if (ec) return {};
  auto rel = real.lexically_relative(base);
  if (rel.empty() || rel.native().starts_with("..")) return {};
  return real;
}

void Serve(const fs::path& root, int port, const std::function<void(int)>& on_ready, const std::atomic<bool>* stop) {
  int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(s, 64) != 0) {
    int err = errno;
    ::close(s);
    throw std::runtime_error("cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(err));
  }
  socklen_t len = sizeof addr;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len);
  if (on_ready) on_ready(ntohs(addr.sin_port));
  while (!stop || !stop->load()) {
    pollfd p{s, POLLIN, 0};
    if (::poll(&p, 1, 500) <= 0) continue;
    int c = ::accept4(s, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    Handle(c, root);
    ::close(c);
  }
  ::close(s);
}

}  // namespace torchgauge::reporter
