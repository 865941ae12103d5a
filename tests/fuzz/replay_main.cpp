// Runs fuzz_capi.cpp's LLVMFuzzerTestOneInput over saved inputs, without libFuzzer: every build (gcc,
// asan) replays the committed corpus and any crash reproducer as an ordinary test.
// Usage: xffl_fuzz_capi_replay FILE_OR_DIR...
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

static void replay(const fs::path &file, size_t &count) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  ++count;
}

int main(int argc, char **argv) {
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path path(argv[i]);
    if (fs::is_directory(path)) {
      for (const auto &entry : fs::directory_iterator(path))
        if (entry.is_regular_file()) replay(entry.path(), count);
    } else if (fs::is_regular_file(path)) {
      replay(path, count);
    } else {
      std::fprintf(stderr, "replay: %s is neither a file nor a directory\n", argv[i]);
      return 2;
    }
  }
  if (count == 0) {
    std::fprintf(stderr, "replay: no inputs found\n");
    return 2;
  }
  std::printf("replayed %zu inputs through the C API without a failed invariant\n", count);
  return 0;
}
