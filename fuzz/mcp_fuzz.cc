// Fuzz target `mcp`: the MCP server's line handler (runtime/mcp/server.cc,
// HandleMcpLine), with tool calls going to a real runtime's API in process
// (fuzz/in_process_api.h): what `limbic mcp` does for each line of stdin.
//
// The input is lines (up to 16), each one message.
//
// Properties: no crash; the answer to a line, when there is one, is a
// JSON-RPC 2.0 response (jsonrpc "2.0", an id, exactly one of result and
// error; an error has an integer code and a string message) that writes as
// one line of JSON and reads back the same; a request (an object with a
// string or integer id and a string method) is answered, with its id; a
// tool call gets its API answer within 30 s.
//
// Left out, as in the `http` target: the `wait` of events_since (long-poll)
// and the ingest tool (reads any path: issue 22 item 5).
#include <cstdint>
#include <spdlog/sinks/null_sink.h>

#include "fuzz/fuzz_util.h"
#include "fuzz/in_process_api.h"
#include "runtime/mcp/api_client.h"
#include "base/json.h"

using namespace limbic;
using nlohmann::json;

namespace {

constexpr size_t kMaxLines = 16;
constexpr uint64_t kRestartAfterCalls = 5000;

class InProcessClient final : public runtime::ApiClient {
 public:
  Result<std::pair<int, std::string>> Call(const runtime::ApiRequest& request) override {
    runtime::HttpRequest req;
    req.method = request.method;
    req.target = request.target;
    req.SetTarget(req.target);
    if (req.path == "/v1/memory/ingest") return Status::Unavailable("ingest is not fuzzed");
    fuzz::DropWait(req);
    req.body = request.body;
    if (!req.body.empty()) req.headers["content-type"] = "application/json";
    req.remote = "127.0.0.1";
    fuzz::InProcessApi::Answer a = fuzz::InProcessApi::Get().Call(req);
    FUZZ_CHECK(a.status != 0, req.method + " " + req.target + ": no answer within " +
                                  std::to_string(fuzz::InProcessApi::kAnswerTimeoutMs) + " ms");
    return std::make_pair(a.status, std::move(a.body));
  }
};

void CheckResponse(const json& request, const json& answer, const std::string& line) {
  const std::string text = CompactJson(answer);
  FUZZ_CHECK(text.find('\n') == std::string::npos, "the answer is not one line: " + text);
  // What is written is valid UTF-8: a message echoing ill-formed input
  // (a parse error's "last read") reads back with U+FFFD in its place.
  json mended = answer;
  (void)MakeValidUtf8(&mended);
  std::optional<json> back = ParseJson(text);
  FUZZ_CHECK(back && *back == mended, "the answer does not read back: " + text);
  FUZZ_CHECK(answer.is_object() && answer.value("jsonrpc", "") == "2.0" && answer.contains("id"),
             "not a JSON-RPC response: " + text);
  FUZZ_CHECK(answer.contains("result") != answer.contains("error"),
             "not exactly one of result and error: " + text);
  if (answer.contains("error"))
    FUZZ_CHECK(answer["error"]["code"].is_number_integer() && answer["error"]["message"].is_string(),
               "error without code and message: " + text);
  const bool is_request = request.is_object() && request.contains("method") &&
                          request["method"].is_string() && request.contains("id") &&
                          (request["id"].is_string() || request["id"].is_number_integer());
  if (is_request)
    FUZZ_CHECK(answer["id"] == request["id"], "answered with another id: " + text + "\n  to " + line);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static InProcessClient client;
  static auto log =
      std::make_shared<spdlog::logger>("fuzz", std::make_shared<spdlog::sinks::null_sink_mt>());
  fuzz::InProcessApi& api = fuzz::InProcessApi::Get();
  if (api.calls() >= kRestartAfterCalls) api.Restart();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  for (std::string_view l : fuzz::SplitLines(input, kMaxLines)) {
    const std::string line(l);
    std::optional<json> answer = runtime::HandleMcpLine(client, line, log);
    std::optional<json> request = ParseJson(line);
    const bool is_request = request && request->is_object() && request->contains("method") &&
                            (*request)["method"].is_string() && request->contains("id") &&
                            ((*request)["id"].is_string() || (*request)["id"].is_number_integer()) &&
                            request->value("jsonrpc", json()) == "2.0";
    if (std::getenv("LIMBIC_FUZZ_VERBOSE"))
      std::fprintf(stderr, "%.200s\n -> %.300s\n", line.c_str(),
                   answer ? CompactJson(*answer).c_str() : "(no answer)");
    if (is_request) FUZZ_CHECK(answer.has_value(), "a request was not answered: " + line);
    if (answer) CheckResponse(request ? *request : json(), *answer, line);
  }
  return 0;
}
