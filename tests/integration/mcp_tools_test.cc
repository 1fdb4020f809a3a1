// `limbic mcp`'s tools through the real binary: a mind that reaches the
// pools, memory, the world model and the archive through MCP alone.
#include <thread>

#include "mcp_client.h"

namespace limbic::testing {

TEST_CASE("mcp: runtime tools through the in-process runtime") {
  TempDir dir;
  McpClient mcp(dir, WriteConfig(dir));
  mcp.Initialize();

  json added = mcp.Ok("add_percept", {{"source", "chat"},
                                      {"type", "message"},
                                      {"intensity", 0.9},
                                      {"text", "hello & welcome?"},
                                      {"data", {{"from", "ana"}}}});
  std::string percept = added["id"];
  CHECK(added["seq"].is_number());
  mcp.Ok("add_percept", {{"source", "mail"}, {"type", "message"}});
  json listed = mcp.Ok("list_percepts", {{"source", "chat"}, {"status", "new"}, {"limit", 10}});
  REQUIRE(listed["percepts"].size() == 1);
  CHECK(listed["percepts"][0]["id"] == percept);
  CHECK(listed["percepts"][0]["text"] == "hello & welcome?");

  mcp.Ok("set_arousal",
         {{"level", 0.7}, {"factors", {{"user_waiting", true}}}, {"reason", "test"}});
  json arousal = mcp.Ok("get_arousal");
  CHECK(arousal["level"] == 0.7);
  CHECK(arousal["factors"]["user_waiting"] == true);

  std::string thread = mcp.Ok("create_thread", {{"goal", "answer ana"}, {"salience", 0.6}})["id"];
  mcp.Ok("update_thread", {{"id", thread},
                           {"salience", 0.9},
                           {"add_percepts", {percept}},
                           {"state", {{"phase", "reading"}}}});
  json attention = mcp.Ok("attention");
  CHECK(attention["thread"]["id"] == thread);
  CHECK(attention["thread"]["state"]["phase"] == "reading");
  REQUIRE(attention["thread_percepts"].size() == 1);
  CHECK(attention["thread_percepts"][0]["id"] == percept);

  std::string action = mcp.Ok("enqueue_action", {{"effector", "log"},
                                                 {"type", "reply"},
                                                 {"payload", {{"text", "hi"}}},
                                                 {"thread_id", thread}})["id"];
  CHECK(!action.empty());

  json events = mcp.Ok("events_since", {{"after", 0}, {"type", "percept_arrived,thread_created"}});
  std::vector<std::string> types;
  for (const json& e : events["events"]) types.push_back(e["type"]);
  CHECK(types == std::vector<std::string>{"percept_arrived", "percept_arrived", "thread_created"});
  CHECK(events["last_seq"].is_number());
  json later = mcp.Ok("events_since", {{"after", events["events"][1]["seq"]}, {"limit", 1}});
  CHECK(later["events"].size() == 1);

  // An API error is the tool's result, not a protocol error.
  json missing = mcp.Call("update_thread", {{"id", "t-nope"}, {"salience", 0.5}});
  CHECK(missing["isError"] == true);
  CHECK(missing["structuredContent"]["error"]["code"] == "not_found");
  json bad = mcp.Call("enqueue_action", {{"effector", "nowhere"}, {"type", "x"}});
  CHECK(bad["isError"] == true);
  CHECK(mcp.Finish() == 0);
  // The sensor was left out: no tick percepts in the log.
  CHECK(Limbic({"--state", dir / "state", "--json", "percept", "list", "--source", "timer"}).out ==
        "[]\n");
}

TEST_CASE("mcp: a mind closes the loop through MCP alone") {
  TempDir dir;
  McpClient mcp(dir, WriteConfig(dir));
  mcp.Initialize();
  std::string p1 = mcp.Ok(
      "add_percept", {{"source", "chat"}, {"type", "message"}, {"text", "deploy failed"}})["id"];
  std::string p2 =
      mcp.Ok("add_percept", {{"source", "chat"}, {"type", "message"}, {"text", "spam"}})["id"];
  std::string p3 =
      mcp.Ok("add_percept", {{"source", "chat"}, {"type", "message"}, {"text", "typo"}})["id"];
  CHECK(mcp.Ok("get_percept", {{"id", p1}})["status"] == "new");
  std::string t = mcp.Ok("create_thread", {{"goal", "fix the deploy"}, {"from_percept", p1}})["id"];
  CHECK(mcp.Ok("get_percept", {{"id", p1}})["thread_id"] == t);  // from_percept assigns
  std::string other = mcp.Ok("create_thread", {{"goal", "later"}})["id"];
  mcp.Ok("assign_percept", {{"id", p3}, {"thread_id", other}});
  mcp.Ok("process_percept", {{"id", p1}});
  mcp.Ok("drop_percept", {{"id", p2}, {"reason", "spam"}});
  CHECK(mcp.Ok("get_percept", {{"id", p2}})["status"] == "dropped");
  CHECK(mcp.Ok("list_threads", {{"status", "all"}})["threads"].size() == 2);
  CHECK(mcp.Ok("get_thread", {{"id", t}})["goal"] == "fix the deploy");
  mcp.Ok("delete_thread", {{"id", other}, {"reason", "not needed"}});
  CHECK(mcp.Ok("get_percept", {{"id", p3}})["status"] == "new");  // unassigned by the deletion
  mcp.Ok("remove_percept", {{"id", p3}});
  CHECK(mcp.Call("get_percept", {{"id", p3}})["isError"] == true);

  std::string a =
      mcp.Ok("enqueue_action", {{"effector", "log"}, {"type", "reply"}, {"thread_id", t}})["id"];
  json action;
  for (int i = 0; i < 100; ++i) {  // the log effector delivers at once
    action = mcp.Ok("get_action", {{"id", a}});
    if (action["status"] == "complete") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(action["status"] == "complete");
  CHECK(mcp.Ok("list_actions", {{"status", "complete"}})["actions"].size() == 1);
  CHECK(mcp.Ok("prune_actions", {{"older_than", "1h"}})["events"].empty());

  json why = mcp.Ok("why", {{"id", p1}});
  CHECK(why["kind"] == "percept");
  CHECK(why["chain"][0]["type"] == "percept_arrived");
  CHECK(mcp.Call("why", {{"id", "p-nope"}})["structuredContent"]["error"]["code"] == "not_found");

  CHECK(mcp.Ok("consolidate")["expired"] == 0);
  mcp.Ok("archive_blink", {{"text", "the deploy failed because the cache was cold"}});
  json found = mcp.Ok("archive_search", {{"q", "cache cold"}, {"k", 3}});
  REQUIRE(found["results"].size() == 1);
  CHECK(found["results"][0]["kind"] == "staged");
  CHECK(mcp.Ok("archive_recall", {{"k", 2}})["items"].size() == 1);
  json no_day = mcp.Call("archive_day", {{"date", "1999-01-01"}});
  CHECK(no_day["isError"] == true);
  CHECK(no_day["structuredContent"]["error"]["code"] == "not_found");
  CHECK(mcp.Finish() == 0);
}

TEST_CASE("mcp: memory and world model tools through the in-process runtime") {
  TempDir dir;
  McpClient mcp(dir, WriteConfig(dir));
  mcp.Initialize();

  json fact = mcp.Ok("remember_fact", {{"subject", "alice"}, {"relation", "works_at"}, {"object", "Acme"}});
  CHECK(fact["id"].get<std::string>().rfind("m-", 0) == 0);
  mcp.Ok("remember_episode", {{"text", "The nightly backup failed because the disk was full."}});
  json recalled = mcp.Ok("recall", {{"query", "backup disk"}, {"k", 3}});
  REQUIRE(!recalled["results"].empty());
  CHECK_THAT(recalled["results"][0]["text"].get<std::string>(), Catch::Contains("backup"));
  CHECK(mcp.Ok("memory_stats")["memories"] == 2);

  json x = mcp.Ok("world_extract", {{"text", "- Alice Chen joined Acme Corp as CTO.\n"},
                                    {"date", "2026-11-02"},
                                    {"source", "notes"}});
  CHECK(x["source"] == "api:notes");
  CHECK(x["pages_created"].get<int>() >= 2);
  json page = mcp.Ok("world_entity", {{"name", "Alice Chen"}});
  CHECK_THAT(page["markdown"].get<std::string>(), Catch::Contains("**Type:** person"));
  json path = mcp.Ok("world_path", {{"from", "Alice Chen"}, {"to", "Acme Corp"}});
  CHECK(path["hops"] == 1);
  CHECK(mcp.Ok("world_consolidate")["added"] == 1);
  CHECK_THAT(mcp.Ok("world_memory")["markdown"].get<std::string>(),
             Catch::Contains("Alice Chen joined Acme Corp as CTO."));
  // The context bundle brings the page and the MEMORY.md section of the entity named.
  json ctx = mcp.Ok("context", {{"query", "what about Alice Chen"}});
  REQUIRE(!ctx["entities"].empty());
  CHECK(ctx["entities"][0]["source"] == "entity:Alice Chen.md");
  REQUIRE(!ctx["memory_md"].empty());
  CHECK(ctx["memory_md"][0]["source"] == "MEMORY.md#People");
  json missing = mcp.Call("world_entity", {{"name", "Nobody"}});
  CHECK(missing["isError"] == true);
  CHECK(missing["structuredContent"]["error"]["code"] == "not_found");
  CHECK(mcp.Finish() == 0);
}

TEST_CASE("mcp: get_memory, include_superseded, forget's guard and ingest's roots") {
  TempDir dir;
  McpClient mcp(dir, WriteConfig(dir));
  mcp.Initialize();
  std::string old_id =
      mcp.Ok("remember_fact", {{"subject", "alice"}, {"relation", "works_at"}, {"object", "Acme"}})["id"];
  mcp.Ok("remember_fact", {{"subject", "alice"}, {"relation", "works_at"}, {"object", "Initech"}});
  json got = mcp.Ok("get_memory", {{"id", old_id}});
  CHECK(got["object"] == "Acme");
  CHECK(got["superseded_by"].is_string());
  CHECK(mcp.Call("get_memory", {{"id", "m-999999"}})["isError"] == true);
  json current = mcp.Ok("recall", {{"query", "alice works_at"}, {"reinforce", false}});
  CHECK(current["results"].size() == 1);
  json all = mcp.Ok("recall",
                    {{"query", "alice works_at"}, {"reinforce", false}, {"include_superseded", true}});
  CHECK(all["results"].size() == 2);
  // older_than "0s" would delete everything: refused, then forced.
  json guarded = mcp.Call("forget", {{"older_than", "0s"}});
  CHECK(guarded["isError"] == true);
  CHECK_THAT(guarded["content"][0]["text"].get<std::string>(), Catch::Contains("more than half"));
  CHECK(mcp.Ok("memory_stats")["memories"] == 2);
  CHECK(mcp.Ok("forget", {{"older_than", "0s"}, {"force", true}})["forgotten"] == 2);
  // No memory.ingest_roots: ingest is refused, and the model reads why.
  std::ofstream(dir / "note.md") << "a note";
  json ingest = mcp.Call("ingest", {{"path", dir / "note.md"}});
  CHECK(ingest["isError"] == true);
  CHECK(ingest["structuredContent"]["error"]["code"] == "forbidden");
  CHECK_THAT(ingest["content"][0]["text"].get<std::string>(), Catch::Contains("memory.ingest_roots"));
  CHECK(mcp.Finish() == 0);
}

}  // namespace limbic::testing
