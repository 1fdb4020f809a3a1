// The webhook and github kinds: requests from POST /v1/sensors/NAME.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "sensors/sensor_config.h"
#include "base/input_json.h"
#include "base/json.h"

namespace limbic::sensors {

using nlohmann::json;

namespace {

// The text after nlohmann's "[json.exception.parse_error.107] parse error: ".
std::string WhyPointerIsBad(const std::exception& e) {
  std::string why = e.what();
  size_t colon = why.find("error: ");
  return colon == std::string::npos ? why : why.substr(colon + 7);
}

}  // namespace

Result<json> WebhookSensor::Map(std::string_view raw_body) {
  auto body = ParseInputJson(raw_body);
  if (!body.ok()) {
    CountRejected();
    return body.status().WithContext("sensor \"" + name_ + "\": body");
  }
  return MapBody(*body);
}

Result<json> WebhookSensor::MapBody(const json& body) {
  json req = json::object();
  for (const Field& f : mapping_) {
    if (!f.pointer) {
      req[f.key] = f.literal;
      continue;
    }
    const json* found = nullptr;
    try {  // contains() throws on an array index beyond size_t
      if (body.contains(*f.pointer)) found = &body.at(*f.pointer);
    } catch (const json::exception&) {
    }
    if (!found) {
      CountRejected();
      return Status::InvalidArgument("sensor \"" + name_ + "\": " + f.key + " pointer \"" +
                                     f.pointer->to_string() + "\" not found in the body");
    }
    req[f.key] = *found;
  }
  return req;
}

std::string GithubSignature(std::string_view secret, std::string_view body) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(body.data()), body.size(), md, &len);
  static const char* kHex = "0123456789abcdef";
  std::string out = "sha256=";
  for (unsigned i = 0; i < len; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 15]);
  }
  return out;
}

Result<json> GithubSensor::Map(std::string_view raw_body, std::string_view event,
                               std::string_view signature, std::string_view delivery) {
  std::string want = GithubSignature(secret_, raw_body);
  if (signature.empty() || signature.size() != want.size() ||
      CRYPTO_memcmp(signature.data(), want.data(), want.size()) != 0) {
    CountRejected();
    return Status::FailedPrecondition(signature.empty()
                                          ? "missing X-Hub-Signature-256"
                                          : "X-Hub-Signature-256 does not match the body");
  }
  if (event.empty()) {
    CountRejected();
    return Status::InvalidArgument("missing X-GitHub-Event");
  }
  // Parsed only once the signature holds: nobody else makes us parse.
  auto parsed = ParseInputJson(raw_body);
  if (!parsed.ok()) {
    CountRejected();
    return parsed.status().WithContext("the GitHub payload");
  }
  if (!parsed->is_object()) {
    CountRejected();
    return Status::InvalidArgument("the GitHub payload is not a JSON object");
  }
  json body = std::move(*parsed);
  std::string type(event);
  if (body.contains("action") && body["action"].is_string())
    type += "." + body["action"].get<std::string>();
  double intensity = 0.5;
  for (const std::string& key : {type, std::string(event), std::string("*")}) {
    if (intensity_.contains(key)) {
      intensity = intensity_[key].get<double>();  // numbers in [0, 1], checked at load
      break;
    }
  }
  std::string text;
  for (const char* path :
       {"/issue/title", "/pull_request/title", "/comment/body", "/head_commit/message"}) {
    json::json_pointer p(path);
    if (body.contains(p) && body.at(p).is_string()) {
      text = body.at(p).get<std::string>();
      break;
    }
  }
  json req = {
      {"source", "github"}, {"type", type}, {"intensity", intensity}, {"data", std::move(body)}};
  if (!text.empty()) req["text"] = text;
  // GitHub redelivers with the same id: the second one is refused as taken.
  if (!delivery.empty()) req["id"] = "gh-" + std::string(delivery);
  return req;
}

Result<std::unique_ptr<Sensor>> MakeWebhookSensor(const std::string& name, const json& cfg,
                                                  boost::asio::io_context&, PerceptSink sink,
                                                  std::shared_ptr<spdlog::logger> log) {
  static const char* kFields[] = {"source", "type", "intensity", "text", "data", "id", "thread_id"};
  LIMBIC_RETURN_IF_ERROR(CheckKeys(
      name, cfg,
      {"source", "type", "intensity", "text", "data", "id", "thread_id", "queue", "overflow"}));
  auto queue = ParseQueueConfig(name, cfg, Overflow::kDropNewest, /*allow_block=*/false);
  if (!queue.ok()) return queue.status();
  std::vector<WebhookSensor::Field> mapping;
  for (const char* key : kFields) {
    auto it = cfg.find(key);
    if (it == cfg.end()) {
      if (std::string(key) == "source" || std::string(key) == "type")
        return KeyError(name, key, "required: a JSON pointer (\"/source\") or a literal");
      continue;
    }
    WebhookSensor::Field f{key, std::nullopt, nullptr};
    // A string that is empty or starts with '/' is a pointer; anything else a literal.
    if (it->is_string() && (it->get_ref<const std::string&>().empty() ||
                            it->get_ref<const std::string&>()[0] == '/')) {
      try {
        f.pointer = json::json_pointer(it->get<std::string>());
      } catch (const json::exception& e) {
        return KeyError(name, key,
                        "invalid JSON pointer " + it->dump() + ": " + WhyPointerIsBad(e));
      }
    } else {
      LIMBIC_RETURN_IF_ERROR(CheckPerceptField(name, key, key, *it));
      f.literal = *it;
    }
    mapping.push_back(std::move(f));
  }
  return std::unique_ptr<Sensor>(new WebhookSensor(
      name, std::move(mapping), queue->capacity, queue->overflow, std::move(sink), std::move(log)));
}

Result<std::unique_ptr<Sensor>> MakeGithubSensor(const std::string& name, const json& cfg,
                                                 boost::asio::io_context&, PerceptSink sink,
                                                 std::shared_ptr<spdlog::logger> log) {
  LIMBIC_RETURN_IF_ERROR(CheckKeys(name, cfg, {"secret", "intensity", "queue", "overflow"}));
  auto queue = ParseQueueConfig(name, cfg, Overflow::kDropNewest, /*allow_block=*/false);
  if (!queue.ok()) return queue.status();
  if (!cfg.contains("secret") || !cfg["secret"].is_string() ||
      cfg["secret"].get<std::string>().empty())
    return KeyError(name, "secret", "required: the webhook secret configured on GitHub");
  json intensity = cfg.contains("intensity") ? cfg["intensity"] : json::object();
  if (!intensity.is_object())
    return KeyError(name, "intensity", "must be an object of event -> number in [0, 1]");
  for (auto it = intensity.begin(); it != intensity.end(); ++it)
    if (!it->is_number() || !(it->get<double>() >= 0 && it->get<double>() <= 1))
      return KeyError(name, "intensity." + it.key(),
                      "must be a number in [0, 1], got " + it->dump());
  return std::unique_ptr<Sensor>(new GithubSensor(name, cfg["secret"], std::move(intensity),
                                                  queue->capacity, queue->overflow, std::move(sink),
                                                  std::move(log)));
}

}  // namespace limbic::sensors
