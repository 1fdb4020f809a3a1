// Routes for consolidation and the archive (docs/api.md, docs/archive.md).
// Each one is one ArchiveStore call run on the archive's worker thread, so
// the HTTP API and `limbic archive` answer with the same JSON.
#include "runtime/api/api.h"
#include "runtime/archive_service.h"
#include "runtime/config.h"
#include "state/engine.h"
#include "state/provenance.h"

namespace limbic::runtime {

using nlohmann::json;

std::span<const Api::Binding> Api::ArchiveBindings() {
  static const Binding kBindings[] = {
      {"consolidate", &Api::Consolidate},
      {"archive_rollup", &Api::ArchiveRollup},
      {"archive_verify", &Api::ArchiveVerify},
      {"archive_search", &Api::ArchiveSearch},
      {"archive_stats", &Api::ArchiveStats},
      {"archive_recall", &Api::ArchiveRecall},
      {"archive_day", &Api::ArchiveDay},
      {"archive_walk", &Api::ArchiveWalk},
      {"archive_blink", &Api::ArchiveBlink},
  };
  return kBindings;
}

void Api::Consolidate(HttpRequest& req, Responder respond) {
  if (auto body = Body(req); !body.ok()) return respond(ErrorResponse(body.status()));
  svc_.archive.Consolidate(AnswerJson(respond));
}

void Api::ArchiveRollup(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  for (auto it = body->begin(); it != body->end(); ++it)
    if (it.key() != "date")
      return respond(ErrorResponse(Status::InvalidArgument("unknown field \"" + it.key() + "\"")));
  std::string date;
  if (body->contains("date")) {
    if (!(*body)["date"].is_string())
      return respond(ErrorResponse(Status::InvalidArgument("field \"date\": must be a date (YYYY-MM-DD)")));
    date = (*body)["date"].get<std::string>();
  }
  std::string today = FormatDate(svc_.engine.clock().Now());
  svc_.archive.Run(
      [date, today](archive::ArchiveStore& s) { return date.empty() ? s.RollupBefore(today) : s.Rollup(date); },
      AnswerJson(respond));
}

void Api::ArchiveVerify(HttpRequest&, Responder respond) {
  svc_.archive.Run([](archive::ArchiveStore& s) { return s.Verify(); }, AnswerJson(respond));
}

void Api::ArchiveSearch(HttpRequest& req, Responder respond) {
  auto q = Query(req, "q");
  if (!q) return respond(ErrorResponse(Status::InvalidArgument("query q: the words to search for are required")));
  auto k = QueryCount(req, "k", 5, 1000);
  if (!k.ok()) return respond(ErrorResponse(k.status()));
  svc_.archive.Run([q = *q, k = *k](archive::ArchiveStore& s) { return s.Search(q, k); }, AnswerJson(respond));
}

void Api::ArchiveStats(HttpRequest&, Responder respond) {
  svc_.archive.Run([](archive::ArchiveStore& s) { return s.Stats(); }, AnswerJson(respond));
}

void Api::ArchiveRecall(HttpRequest& req, Responder respond) {
  auto k = QueryCount(req, "k", 5, 1000);
  if (!k.ok()) return respond(ErrorResponse(k.status()));
  svc_.archive.Run([k = *k](archive::ArchiveStore& s) { return s.Recall(k); }, AnswerJson(respond));
}

void Api::ArchiveDay(HttpRequest& req, Responder respond) {
  svc_.archive.Run([date = Param(req, "date")](archive::ArchiveStore& s) { return s.Show(date); },
                    AnswerJson(respond));
}

void Api::ArchiveWalk(HttpRequest& req, Responder respond) {
  auto depth = QueryCount(req, "depth", 1, 1000);
  if (!depth.ok()) return respond(ErrorResponse(depth.status()));
  std::string direction = Query(req, "direction").value_or("temporal");
  svc_.archive.Run(
      [date = Param(req, "date"), direction, depth = static_cast<int>(*depth)](archive::ArchiveStore& s) {
        return s.Walk(date, direction, depth);
      },
      AnswerJson(respond));
}

void Api::ArchiveBlink(HttpRequest& req, Responder respond) {
  auto body = req.JsonBody();
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  auto events = state::BuildBlink(*body, svc_.engine.clock().Now());
  if (!events.ok()) return respond(ErrorResponse(events.status()));
  auto actor = ActorOf(req);
  if (!actor.ok()) return respond(ErrorResponse(actor.status()));
  state::Attribute(*events, *actor);
  Status s = svc_.engine.Submit(std::move(events).value(), [this, respond](const Status& st,
                                                                           std::span<const state::Event> done) {
    if (!st.ok()) return respond(ErrorResponse(st));
    json receipt = CommitReceipt(done, nullptr);
    // Answer once the entry is in staging, so a search right after finds it.
    uint64_t seq = done.back().seq;
    svc_.archive.Run(
        [seq](archive::ArchiveStore& store) -> Result<json> {
          auto n = store.CatchUp(seq);
          if (!n.ok()) return n.status();
          return json::object();
        },
        [respond, receipt](Result<json> r) {
          if (!r.ok()) return respond(ErrorResponse(r.status()));
          respond(HttpResponse::Json(201, receipt));
        });
  });
  if (!s.ok()) respond(ErrorResponse(s));
}

}  // namespace limbic::runtime
