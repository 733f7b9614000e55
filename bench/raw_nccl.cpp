// collbench_raw_nccl: a plain-NCCL reference for `collbench --backend nccl --algo library` at
// one rank (issue 17), as collbench_raw is for MPI. No collbench code and no MPI: one process,
// one GPU, a communicator of one rank from ncclCommInitAll, float32 sum ncclAllReduce.
//
//   sizes    -b/-e/-f as collbench (geometric, max included), rounded down to whole float32s.
//   buffers  cudaMalloc'd send and recv per size, filled with 1.0f (out of place).
//   timing   nccl-tests' batch: t0, N back-to-back ncclAllReduce on one stream,
//            cudaStreamSynchronize, t1; sample = (t1 - t0) / N; S samples, p50 over samples
//            (collbench --batch -n N, adaptive rounds of N ops). -w calls before any sample.
//
// Output: one JSON line per size on stdout (or appended to --json FILE):
// {"type":"raw","op":"allreduce","method":"batch","backend":"nccl","bytes","count","world_size":1,
//  "iters","samples","warmup","p50_us","mean_us","min_us","max_us","samples_us":[...],"device"}
// Exit status: 0 ok, 2 bad input, 3 a CUDA/NCCL error, 77 no GPU ("no GPU: skipped").
//
// Usage: collbench_raw_nccl -b 1M -e 256M -f 4 -n 50 --samples 20 -w 10 [--json FILE]
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(int code, const std::string& msg) {
  std::fprintf(stderr, "collbench_raw_nccl: %s\n", msg.c_str());
  std::exit(code);
}

void cuda_ok(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) die(3, std::string(what) + ": " + cudaGetErrorString(rc));
}
void nccl_ok(ncclResult_t rc, const char* what) {
  if (rc != ncclSuccess) die(3, std::string(what) + ": " + ncclGetErrorString(rc));
}

// "8", "64K", "16M", "1G" (binary units, as collbench).
std::uint64_t parse_size(const std::string& s) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) die(2, "bad size '" + s + "'; accepted: e.g. 8, 64K, 16M, 1G");
  const std::string unit(end);
  if (unit.empty()) return v;
  if (unit == "K" || unit == "k") return v << 10;
  if (unit == "M" || unit == "m") return v << 20;
  if (unit == "G" || unit == "g") return v << 30;
  die(2, "bad size '" + s + "'; accepted: e.g. 8, 64K, 16M, 1G");
}

int parse_int(const std::string& s, int lo, const char* what) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (end == s.c_str() || *end || v < lo || v > 1'000'000'000) die(2, std::string("bad ") + what + " '" + s + "'");
  return static_cast<int>(v);
}

struct Options {
  std::uint64_t min_bytes = 1 << 20, max_bytes = 256 << 20, factor = 4;
  int iters = 50, samples = 20, warmup = 10;
  std::string json;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(2, "missing value after " + a);
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::puts("usage: collbench_raw_nccl [-b SIZE] [-e SIZE] [-f N] [-n OPS] [--samples S] [-w N] [--json FILE]");
      std::exit(0);
    } else if (a == "-b")
      o.min_bytes = parse_size(value());
    else if (a == "-e")
      o.max_bytes = parse_size(value());
    else if (a == "-f")
      o.factor = static_cast<std::uint64_t>(parse_int(value(), 2, "-f"));
    else if (a == "-n")
      o.iters = parse_int(value(), 1, "-n");
    else if (a == "--samples")
      o.samples = parse_int(value(), 1, "--samples");
    else if (a == "-w")
      o.warmup = parse_int(value(), 0, "-w");
    else if (a == "--json")
      o.json = value();
    else
      die(2, "unknown option '" + a + "'; accepted: -b -e -f -n --samples -w --json");
  }
  if (o.min_bytes > o.max_bytes) die(2, "-b is larger than -e");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("no GPU: skipped");
    return 77;
  }
  cudaDeviceProp prop{};
  cuda_ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  cuda_ok(cudaSetDevice(0), "cudaSetDevice");
  ncclComm_t comm = nullptr;
  int dev0 = 0;
  nccl_ok(ncclCommInitAll(&comm, 1, &dev0), "ncclCommInitAll");
  cudaStream_t stream = nullptr;
  cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  std::FILE* out = o.json.empty() ? stdout : std::fopen(o.json.c_str(), "a");
  if (!out) die(2, "cannot open " + o.json);

  std::vector<std::uint64_t> sizes;
  for (std::uint64_t b = o.min_bytes; b <= o.max_bytes; b = b * o.factor) {
    sizes.push_back(b);
    if (b > o.max_bytes / o.factor) break;
  }
  if (sizes.empty() || sizes.back() != o.max_bytes) sizes.push_back(o.max_bytes);
  using Clock = std::chrono::steady_clock;
  for (std::uint64_t bytes : sizes) {
    const std::size_t count = bytes / sizeof(float);
    if (count == 0) continue;
    void *send = nullptr, *recv = nullptr;
    cuda_ok(cudaMalloc(&send, count * sizeof(float)), "cudaMalloc");
    cuda_ok(cudaMalloc(&recv, count * sizeof(float)), "cudaMalloc");
    std::vector<float> ones(count, 1.0f);
    cuda_ok(cudaMemcpy(send, ones.data(), count * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
    for (int k = 0; k < o.warmup; ++k)
      nccl_ok(ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, comm, stream), "ncclAllReduce");
    cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    std::vector<double> us;
    for (int s = 0; s < o.samples; ++s) {
      const auto t0 = Clock::now();
      for (int k = 0; k < o.iters; ++k)
        nccl_ok(ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, comm, stream), "ncclAllReduce");
      cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / o.iters);
    }
    std::vector<float> check(count);
    cuda_ok(cudaMemcpy(check.data(), recv, count * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (check.front() != 1.0f || check.back() != 1.0f) die(3, "wrong result at " + std::to_string(bytes) + " B");
    cudaFree(send);
    cudaFree(recv);
    std::vector<double> sorted = us;
    std::sort(sorted.begin(), sorted.end());
    double mean = 0;
    for (double v : us) mean += v / static_cast<double>(us.size());
    std::string samples;
    for (double v : us) samples += (samples.empty() ? "" : ",") + std::to_string(v);
    std::fprintf(out,
                 "{\"type\":\"raw\",\"op\":\"allreduce\",\"method\":\"batch\",\"backend\":\"nccl\",\"bytes\":%llu,"
                 "\"count\":%zu,\"world_size\":1,\"iters\":%d,\"samples\":%d,\"warmup\":%d,\"p50_us\":%.4f,"
                 "\"mean_us\":%.4f,\"min_us\":%.4f,\"max_us\":%.4f,\"samples_us\":[%s],\"device\":\"%s\"}\n",
                 static_cast<unsigned long long>(count * sizeof(float)), count, o.iters, o.samples, o.warmup,
                 sorted[sorted.size() / 2], mean, sorted.front(), sorted.back(), samples.c_str(), prop.name);
    std::fflush(out);
  }
  if (out != stdout) std::fclose(out);
  ncclCommDestroy(comm);
  cudaStreamDestroy(stream);
  return 0;
}
