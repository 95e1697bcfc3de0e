// A LibTorch program that is not TorchGauge, for tools/libtorch_rss.py: a
// small conv net's eval steps on one thread, then the process's peak RSS and
// the resident KiB of each mapped file, as one JSON object on stdout. Linked
// as the collector is (libtorch, so libtorch_cuda and the CUDA libraries it
// needs), it shows what loading a release's libraries costs a C++ process,
// outside TorchGauge's own measurement.
#include <torch/torch.h>

#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

namespace {

// "libfoo.so.13.1" and "libfoo.so" count as one library.
std::string LibraryName(const std::string& path) {
  const auto slash = path.rfind('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const auto so = name.find(".so");
  return so == std::string::npos ? name : name.substr(0, so + 3);
}

std::map<std::string, long> ResidentPerFile() {
  std::map<std::string, long> kib;
  std::ifstream smaps("/proc/self/smaps");
  std::string line, name = "[anon]";
  while (std::getline(smaps, line)) {
    std::istringstream in(line);
    std::string first;
    in >> first;
    if (first == "Rss:") {
      long value = 0;
      in >> value;
      kib[name] += value;
    } else if (first.find('-') != std::string::npos && first.back() != ':') {
      std::string perms, offset, dev, inode, path;
      in >> perms >> offset >> dev >> inode >> std::ws;
      std::getline(in, path);
      name = path.empty() ? "[anon]" : LibraryName(path);
    }
  }
  return kib;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

}  // namespace

int main() {
  torch::manual_seed(0);
  torch::set_num_threads(1);
  namespace nn = torch::nn;
  nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(3, 64, 3).padding(1)), nn::ReLU(), nn::AdaptiveAvgPool2d(1),
                     nn::Flatten(), nn::Linear(64, 10));
  net->eval();
  torch::InferenceMode guard;
  const auto x = torch::randn({2, 3, 64, 64});
  double checksum = 0;
  for (int i = 0; i < 3; ++i) checksum += net->forward(x).sum().item<double>();

  std::cout << "{\"torch\": \"" << TORCH_VERSION << "\", \"checksum\": " << checksum;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    for (const char* key : {"VmHWM", "RssAnon", "RssFile"}) {
      if (line.rfind(std::string(key) + ":", 0) == 0) {
        std::cout << ", \"" << key << "_kib\": " << std::stol(line.substr(line.find(':') + 1));
      }
    }
  }
  std::cout << ", \"files_kib\": {";
  const char* sep = "";
  for (const auto& [name, kib] : ResidentPerFile()) {
    std::cout << sep << JsonString(name) << ": " << kib;
    sep = ", ";
  }
  std::cout << "}}\n";
}
