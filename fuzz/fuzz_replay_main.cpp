// fuzz_replay_main.cpp - the main() of a fuzz target built without libFuzzer
// (gcc, or clang without -fsanitize=fuzzer): it feeds every file named on the
// command line, and every regular file inside every directory named there,
// to LLVMFuzzerTestOneInput once, in name order. This is how the kept corpus
// and crash regressions under fuzz/corpus/ replay in the default build and
// under the sanitizers. A crash or sanitizer report fails the process; the
// last "replay:" line names the input that caused it.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool ReadAll(const std::filesystem::path& path, std::vector<uint8_t>* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; i++) {
    std::filesystem::path arg(argv[i]);
    if (!arg.empty() && arg.string()[0] == '-') continue;  // libFuzzer flags: ignored
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg))
        if (entry.is_regular_file()) inputs.push_back(entry.path());
    } else {
      inputs.push_back(arg);
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    std::fprintf(stderr, "usage: %s FILE-OR-DIR...: no inputs\n", argv[0]);
    return 2;
  }
  std::vector<uint8_t> data;
  for (const auto& path : inputs) {
    std::fprintf(stderr, "replay: %s\n", path.c_str());
    if (!ReadAll(path, &data)) {
      std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
      return 2;
    }
    LLVMFuzzerTestOneInput(data.data(), data.size());
  }
  std::fprintf(stderr, "replay: %zu inputs, no crash\n", inputs.size());
  return 0;
}
