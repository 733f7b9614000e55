// A minimal NVTX tool (what Nsight Systems is to NVTX), loaded by the application's NVTX
// calls through NVTX_INJECTION64_PATH. It records every range push/pop — core ASCII ranges and
// domain ranges with ASCII or registered-string messages — one line per event, to
// $COLLBENCH_NVTX_OUT.<rank>:   push<TAB>depth<TAB>domain<TAB>name<TAB>payload|-   and
// pop<TAB>depth<TAB>domain. Used by the harness tests to prove the ranges are emitted.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace {

struct Log {
  std::mutex mu;
  std::FILE* f = nullptr;
  std::map<std::string, int> depth;  // per domain ("" = the default domain)

  std::FILE* file() {
    if (f) return f;
    const char* base = std::getenv("COLLBENCH_NVTX_OUT");
    if (!base) return nullptr;
    const char* rank = nullptr;
    for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
      if ((rank = std::getenv(v))) break;
    const std::string path = std::string(base) + "." + (rank ? rank : "0");
    f = std::fopen(path.c_str(), "w");
    return f;
  }
  void push(const std::string& domain, const std::string& name, const std::string& payload) {
    std::lock_guard<std::mutex> lock(mu);
    if (std::FILE* out = file()) {
      std::fprintf(out, "push\t%d\t%s\t%s\t%s\n", depth[domain]++, domain.c_str(), name.c_str(), payload.c_str());
      std::fflush(out);
    }
  }
  void pop(const std::string& domain) {
    std::lock_guard<std::mutex> lock(mu);
    if (std::FILE* out = file()) {
      std::fprintf(out, "pop\t%d\t%s\n", --depth[domain], domain.c_str());
      std::fflush(out);
    }
  }
};

Log& log() {
  static Log* l = new Log;  // never destroyed: ranges may end during static destruction
  return *l;
}

// Handles given to the application are pointers to strings we own (never freed).
std::string domain_name(nvtxDomainHandle_t d) { return d ? *reinterpret_cast<std::string*>(d) : std::string(); }

std::string message_of(const nvtxEventAttributes_t* a) {
  if (!a) return "";
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return a->message.ascii ? a->message.ascii : "";
    case NVTX_MESSAGE_TYPE_REGISTERED:
      return a->message.registered ? *reinterpret_cast<const std::string*>(a->message.registered) : "";
    default: return "<unsupported message type>";
  }
}

std::string payload_of(const nvtxEventAttributes_t* a) {
  if (!a) return "-";
  switch (a->payloadType) {
    case NVTX_PAYLOAD_TYPE_INT64: return std::to_string(a->payload.llValue);
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: return std::to_string(a->payload.ullValue);
    case NVTX_PAYLOAD_TYPE_INT32: return std::to_string(a->payload.iValue);
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32: return std::to_string(a->payload.uiValue);
    case NVTX_PAYLOAD_TYPE_DOUBLE: return std::to_string(a->payload.dValue);
    default: return "-";
  }
}

// NVTX_CB_MODULE_CORE
void NVTX_API MarkA(const char* m) {
  log().push("", m ? m : "", "mark");
  log().pop("");
}
int NVTX_API RangePushA(const char* m) {
  log().push("", m ? m : "", "-");
  return 0;
}
int NVTX_API RangePushEx(const nvtxEventAttributes_t* a) {
  log().push("", message_of(a), payload_of(a));
  return 0;
}
int NVTX_API RangePop() {
  log().pop("");
  return 0;
}

// NVTX_CB_MODULE_CORE2
nvtxDomainHandle_t NVTX_API DomainCreateA(const char* name) {
  return reinterpret_cast<nvtxDomainHandle_t>(new std::string(name ? name : ""));
}
nvtxStringHandle_t NVTX_API DomainRegisterStringA(nvtxDomainHandle_t, const char* s) {
  return reinterpret_cast<nvtxStringHandle_t>(new std::string(s ? s : ""));
}
int NVTX_API DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  log().push(domain_name(d), message_of(a), payload_of(a));
  return 0;
}
int NVTX_API DomainRangePop(nvtxDomainHandle_t d) {
  log().pop(domain_name(d));
  return 0;
}

template <class F>
bool set(NvtxFunctionTable table, unsigned size, unsigned id, F fn) {
  if (id >= size || !table[id]) return false;
  *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
  return true;
}

}  // namespace

extern "C" NVTX_DYNAMIC_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  const auto* cb = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (!cb || cb->struct_size < sizeof(NvtxExportTableCallbacks) || !cb->GetModuleFunctionTable) return 0;
  NvtxFunctionTable core = nullptr, core2 = nullptr;
  unsigned core_size = 0, core2_size = 0;
  if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) ||
      !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size))
    return 0;
  bool ok = set(core, core_size, NVTX_CBID_CORE_MarkA, &MarkA) && set(core, core_size, NVTX_CBID_CORE_RangePushA, &RangePushA) &&
            set(core, core_size, NVTX_CBID_CORE_RangePushEx, &RangePushEx) && set(core, core_size, NVTX_CBID_CORE_RangePop, &RangePop) &&
            set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &DomainCreateA) &&
            set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &DomainRegisterStringA) &&
            set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &DomainRangePushEx) &&
            set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &DomainRangePop);
  return ok ? 1 : 0;
}
