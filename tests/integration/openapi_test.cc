// The API's description (issue 39): GET /v1/openapi.json through the real
// binary -- without the token, under the Host rule -- is docs/openapi.json,
// which `limbic openapi` prints (`make openapi` writes it).
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "http.h"
#include "process.h"
#include "runtime_util.h"

using nlohmann::json;
using namespace limbic::testing;

TEST_CASE("openapi: docs/openapi.json is what the binary serves and prints", "[api][openapi]") {
  std::ifstream in(std::string(LIMBIC_SOURCE_DIR) + "/docs/openapi.json");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const json kept = json::parse(text.str(), nullptr, false);
  REQUIRE(kept.is_object());

  TempDir dir;
  json config = BaseConfig(dir);
  config["api"]["token"] = "s3cret";
  RunningLimbic l(dir, config);
  REQUIRE(l.port() != 0);
  auto served = Http(l.port(), "GET", "/v1/openapi.json");  // no token
  REQUIRE(served.status == 200);
  CHECK_THAT(served.headers["content-type"], Catch::StartsWith("application/json"));
  // On a difference: `make openapi` (or build/limbic openapi > docs/openapi.json).
  CHECK(served.Json() == kept);
  // The Host rule applies to it like to any route; other routes still want the token.
  CHECK(Http(l.port(), "GET", "/v1/openapi.json", "", {{"Host", "evil.example:80"}}).status ==
        421);
  CHECK(Http(l.port(), "GET", "/v1/percepts").status == 401);

  // `limbic openapi` prints the same document, byte for byte as the file.
  auto printed = Limbic({"openapi"});
  CHECK(printed.exit_code == 0);
  CHECK(printed.out == text.str());
}
