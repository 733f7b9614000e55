// LD_PRELOAD shim counting what an MPICH ch4:ucx process sends, per destination: the
// MPICH side of what Open MPI's pml/monitoring gives tests/mpi/test_tuned_forcing.py.
// MPICH has no monitoring layer and no useful pvars in Debian's build, but every point-to-point
// message its collectives send is one ucp_tag_send_nbx / ucp_tag_send_sync_nbx call on the
// endpoint of the destination (with MPIR_CVAR_NOLOCAL=1, also between ranks of one machine:
// else MPICH's own shared memory carries them and UCX never sees them).
// Destinations are told apart by the endpoint's remote worker address: its bytes 1-8 are the
// remote worker's UUID (UCX 1.13 packs a header byte, then the UUID), and every process writes
// its own address's key too, so the test maps keys to ranks and fails if one does not map.
// Bytes: a contiguous send's count x element size; a non-contiguous one (MPICH hands UCX its
// own pack callbacks, ucp_dt_create_generic) by what MPICH's packed_size answers UCX inside the
// send call (calling MPICH's callbacks ourselves would upset its datatype reference counts).
// At exit each process writes $COLLBENCH_UCP_COUNT_DIR/rank<PMI_RANK>.txt:
//   self KEY
//   to KEY MESSAGES BYTES        (one line per endpoint that sent)
//   am MESSAGES                  (active messages: MPICH's RMA and some protocols; reported)
#include <dlfcn.h>
#include <ucp/api/ucp.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

struct Sent {
  std::uint64_t key = 0;  // the destination worker's UUID, 0 until known
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
};

// One process's counts: the preloaded library's own state, written once at exit.
struct Counts {
  std::mutex lock;
  std::uint64_t self = 0;
  std::map<ucp_ep_h, Sent> sent;
  // MPICH's callbacks for its non-contiguous datatypes, with packed_size passed through ours.
  ucp_generic_dt_ops_t ops{};
  bool ops_known = false;
  std::uint64_t am = 0;
  ~Counts() {
    const char* dir = std::getenv("COLLBENCH_UCP_COUNT_DIR");
    const char* rank = std::getenv("PMI_RANK");
    if (!dir || !rank) return;
    const std::string path = std::string(dir) + "/rank" + rank + ".txt";
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) return;
    std::fprintf(f, "self %016" PRIx64 "\n", self);
    for (const auto& [ep, s] : sent)
      if (s.messages) std::fprintf(f, "to %016" PRIx64 " %" PRIu64 " %" PRIu64 "\n", s.key, s.messages, s.bytes);
    std::fprintf(f, "am %" PRIu64 "\n", am);
    std::fclose(f);
  }
};
Counts counts;

std::uint64_t uuid_of(const void* address) {
  std::uint64_t k = 0;
  std::memcpy(&k, static_cast<const unsigned char*>(address) + 1, sizeof k);
  return k;
}

template <class F>
F real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// The send in progress on this thread, where packed_size adds a generic datatype's bytes.
thread_local Sent* sending = nullptr;

std::size_t packed_size(void* state) {
  const std::size_t n = counts.ops.packed_size(state);
  if (sending) sending->bytes += n;
  return n;
}

template <class Send>
ucs_status_ptr_t count_send(ucp_ep_h ep, std::size_t count, const ucp_request_param_t* param, Send send) {
  Sent* s = nullptr;
  bool generic = false;
  {
    const std::lock_guard<std::mutex> g(counts.lock);
    s = &counts.sent[ep];  // std::map: the element stays where it is
    ++s->messages;
    const bool typed = param && (param->op_attr_mask & UCP_OP_ATTR_FIELD_DATATYPE);
    const ucp_datatype_t dt = typed ? param->datatype : ucp_dt_make_contig(1);
    if ((dt & UCP_DATATYPE_CLASS_MASK) == UCP_DATATYPE_CONTIG) s->bytes += count * (dt >> UCP_DATATYPE_SHIFT);
    else if ((dt & UCP_DATATYPE_CLASS_MASK) == UCP_DATATYPE_GENERIC) generic = true;
    else {
      std::fprintf(stderr, "ucp_count: a send of a datatype class it cannot size (%#llx)\n",
                   static_cast<unsigned long long>(dt & UCP_DATATYPE_CLASS_MASK));
      std::abort();  // never guess a size the test would read as bytes
    }
  }
  if (!generic) return send();
  const std::uint64_t before = s->bytes;
  sending = s;
  const ucs_status_ptr_t r = send();
  sending = nullptr;
  if (s->bytes == before && count) {
    std::fprintf(stderr, "ucp_count: UCX sized no generic send inside ucp_tag_send_nbx\n");
    std::abort();
  }
  return r;
}

}  // namespace

extern "C" {

ucs_status_t ucp_worker_get_address(ucp_worker_h worker, ucp_address_t** address, size_t* length) {
  static const auto f = real<ucs_status_t (*)(ucp_worker_h, ucp_address_t**, size_t*)>("ucp_worker_get_address");
  const ucs_status_t s = f(worker, address, length);
  if (s == UCS_OK && *length > sizeof(std::uint64_t)) {
    const std::lock_guard<std::mutex> g(counts.lock);
    counts.self = uuid_of(*address);
  }
  return s;
}

ucs_status_t ucp_dt_create_generic(const ucp_generic_dt_ops_t* ops, void* context, ucp_datatype_t* datatype) {
  static const auto f = real<decltype(&ucp_dt_create_generic)>("ucp_dt_create_generic");
  ucp_generic_dt_ops_t mine = *ops;
  {
    const std::lock_guard<std::mutex> g(counts.lock);
    if (counts.ops_known && counts.ops.packed_size != ops->packed_size) {
      std::fprintf(stderr, "ucp_count: a second set of generic datatype callbacks\n");
      std::abort();  // packed_size() above passes through one set only
    }
    counts.ops = *ops;
    counts.ops_known = true;
  }
  mine.packed_size = &packed_size;
  return f(&mine, context, datatype);  // UCX copies the table
}

ucs_status_t ucp_ep_create(ucp_worker_h worker, const ucp_ep_params_t* params, ucp_ep_h* ep) {
  static const auto f = real<ucs_status_t (*)(ucp_worker_h, const ucp_ep_params_t*, ucp_ep_h*)>("ucp_ep_create");
  const ucs_status_t s = f(worker, params, ep);
  if (s == UCS_OK && (params->field_mask & UCP_EP_PARAM_FIELD_REMOTE_ADDRESS)) {
    const std::lock_guard<std::mutex> g(counts.lock);
    counts.sent[*ep].key = uuid_of(params->address);
  }
  return s;
}

ucs_status_ptr_t ucp_tag_send_nbx(ucp_ep_h ep, const void* buffer, size_t count, ucp_tag_t tag,
                                  const ucp_request_param_t* param) {
  static const auto f = real<decltype(&ucp_tag_send_nbx)>("ucp_tag_send_nbx");
  return count_send(ep, count, param, [&] { return f(ep, buffer, count, tag, param); });
}

ucs_status_ptr_t ucp_tag_send_sync_nbx(ucp_ep_h ep, const void* buffer, size_t count, ucp_tag_t tag,
                                       const ucp_request_param_t* param) {
  static const auto f = real<decltype(&ucp_tag_send_sync_nbx)>("ucp_tag_send_sync_nbx");
  return count_send(ep, count, param, [&] { return f(ep, buffer, count, tag, param); });
}

ucs_status_ptr_t ucp_am_send_nb(ucp_ep_h ep, uint16_t id, const void* buffer, size_t count, ucp_datatype_t datatype,
                                ucp_send_callback_t cb, unsigned flags) {
  static const auto f = real<decltype(&ucp_am_send_nb)>("ucp_am_send_nb");
  {
    const std::lock_guard<std::mutex> g(counts.lock);
    ++counts.am;
  }
  return f(ep, id, buffer, count, datatype, cb, flags);
}

}  // extern "C"
