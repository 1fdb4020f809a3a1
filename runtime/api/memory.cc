// Handlers for long-term memory (operations_memory.cc) and the mind's context bundle (docs/api.md
// "Memory", "Context"; runtime/context.h). Each write is a MemoryStore plan submitted to the
// Engine; the answer goes out once its events are durable and applied.
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>

#include "runtime/api/api.h"
#include "runtime/archive_service.h"
#include "runtime/attention.h"
#include "runtime/config.h"
#include "runtime/context.h"
#include "runtime/embed_service.h"
#include "runtime/ingest_service.h"
#include "runtime/world_service.h"
#include "state/commands.h"
#include "state/engine.h"

namespace limbic::runtime {

using nlohmann::json;

namespace {

// A prepared ingest is committed kFilesPerCommit files at a time, each batch
// planned once the one before is durable and applied: a 4,000-file folder
// is thousands of events, and the loop serves other requests between
// batches. A file met twice is found in the pool (or, within a batch, by
// PlanIngest) as a duplicate. A failure midway leaves the batches before
// it ingested; ingesting again reports them as duplicates.
constexpr size_t kFilesPerCommit = 4;
// How long GET /v1/context waits for the world model's worker.
constexpr int kContextWorldWaitMs = 500;

struct IngestCommit {
  const ApiServices& svc;
  memory::PreparedIngest prepared;
  Responder respond;
  size_t next = 0;  // the first file not yet planned
  json files = json::array();
  uint64_t seq = 0;   // the last event's
  size_t events = 0;  // written so far
};

void CommitIngest(std::shared_ptr<IngestCommit> c) {
  memory::PreparedIngest batch;
  batch.episode_id = c->prepared.episode_id;
  batch.embedder_id = c->prepared.embedder_id;
  const size_t end = std::min(c->prepared.files.size(), c->next + kFilesPerCommit);
  for (; c->next < end; ++c->next) batch.files.push_back(std::move(c->prepared.files[c->next]));
  auto plan = c->svc.memory.PlanIngest(std::move(batch));
  if (!plan.ok()) return c->respond(ErrorResponse(plan.status()));
  for (json& f : plan->answer["files"]) c->files.push_back(std::move(f));
  auto then = [c] {
    if (c->next < c->prepared.files.size()) return CommitIngest(c);
    json answer = {{"files", std::move(c->files)},
                   {"skipped", c->prepared.skipped},
                   {"errors", c->prepared.errors}};
    if (c->events > 0) {
      answer["seq"] = c->seq;
      answer["events_written"] = c->events;
    }
    c->respond(HttpResponse::Json(c->events > 0 ? 201 : 200, answer));
  };
  // A batch of duplicates writes nothing: the next one on a later turn.
  if (plan->events.empty()) return boost::asio::post(c->svc.ioc, then);
  Status s = c->svc.engine.Submit(std::move(plan->events),
                                  [c, then](const Status& st, std::span<const state::Event> done) {
                                    if (!st.ok()) return c->respond(ErrorResponse(st));
                                    c->seq = done.back().seq;
                                    c->events += done.size();
                                    then();
                                  });
  if (!s.ok()) c->respond(ErrorResponse(s));
}

}  // namespace

void Api::CommitPlan(Result<memory::MemoryPlan> plan, Responder respond) {
  if (!plan.ok()) return respond(ErrorResponse(plan.status()));
  if (plan->events.empty()) return respond(HttpResponse::Json(200, plan->answer));
  const bool created = plan->created;
  Status s = svc_.engine.Submit(std::move(plan->events),
                                [respond, created, answer = std::move(plan->answer)](
                                    const Status& st, std::span<const state::Event> done) mutable {
                                  if (!st.ok()) return respond(ErrorResponse(st));
                                  answer["seq"] = done.back().seq;
                                  answer["events_written"] = done.size();
                                  respond(HttpResponse::Json(created ? 201 : 200, answer));
                                });
  if (!s.ok()) respond(ErrorResponse(s));
}

// Runs recall: the query's vector from the embed worker, then the archive's
// hits from its worker when archive items may be wanted, then the memory
// store on the loop.
void Api::RecallWithArchive(memory::RecallRequest req,
                            std::function<void(Result<memory::MemoryPlan>)> done) {
  svc_.embed.Run({req.query}, memory::EmbedRole::kQuery, [this, req, done](memory::Embedded e) {
    auto embedded = std::make_shared<memory::Embedded>(std::move(e));
    if (!req.WantsArchive())
      return done(svc_.memory.Recall(req, svc_.engine.clock().Now(), {}, embedded.get()));
    svc_.archive.Run(
        [q = req.query, depth = req.Depth()](archive::ArchiveStore& s) {
          return s.Search(q, depth);
        },
        [this, req, done, embedded](Result<json> found) {
          std::vector<memory::ArchiveHit> hits;
          if (found.ok())
            hits = memory::ArchiveHitsFromSearch(*found);
          else
            log_->warn("recall: archive search failed: {}", found.status().ToString());
          done(svc_.memory.Recall(req, svc_.engine.clock().Now(), hits, embedded.get()));
        });
  });
}

std::span<const Api::Binding> Api::MemoryBindings() {
  static const Binding kBindings[] = {
      {"remember_fact", &Api::RememberFact},
      {"remember_episode", &Api::RememberEpisode},
      {"recall", &Api::Recall},
      {"relate", &Api::Relate},
      {"related", &Api::Related},
      {"forget", &Api::Forget},
      {"decay", &Api::Decay},
      {"memory_stats", &Api::MemoryStats},
      {"embed", &Api::Embed},
      {"export_memory", &Api::ExportMemory},
      {"import_memory", &Api::ImportMemory},
      {"ingest", &Api::Ingest},
      {"get_memory", &Api::GetMemory},
      {"context", &Api::GetContext},
  };
  return kBindings;
}

void Api::RememberFact(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  std::string text = memory::FactText(*body);
  svc_.embed.Run({std::move(text)}, memory::EmbedRole::kPassage,
                 [this, body = std::move(*body), respond](memory::Embedded e) {
                   CommitPlan(svc_.memory.RememberFact(body, &e), respond);
                 });
}

void Api::RememberEpisode(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  std::string text = memory::EpisodeText(*body);
  svc_.embed.Run({std::move(text)}, memory::EmbedRole::kPassage,
                 [this, body = std::move(*body), respond](memory::Embedded e) {
                   CommitPlan(svc_.memory.RememberEpisode(body, svc_.engine.clock().Now(), &e),
                              respond);
                 });
}

void Api::Recall(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  auto parsed = memory::ParseRecallRequest(*body);
  if (!parsed.ok()) return respond(ErrorResponse(parsed.status()));
  RecallWithArchive(*parsed, [this, respond](Result<memory::MemoryPlan> plan) {
    CommitPlan(std::move(plan), respond);
  });
}

void Api::Relate(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  CommitPlan(svc_.memory.Relate(*body), respond);
}

void Api::Related(HttpRequest& req, Responder respond) {
  // Not capped like other counts: a depth beyond 3 is refused, as in Related.
  auto depth = QueryCount(req, "depth", 1, 1000);
  if (!depth.ok()) return respond(ErrorResponse(depth.status()));
  auto out = svc_.memory.Related(Query(req, "entity").value_or(""), static_cast<int>(*depth));
  if (!out.ok()) return respond(ErrorResponse(out.status()));
  respond(HttpResponse::Json(200, *out));
}

void Api::Forget(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  CommitPlan(svc_.memory.Forget(*body, svc_.engine.clock().Now()), respond);
}

void Api::Decay(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  for (auto it = body->begin(); it != body->end(); ++it)
    if (it.key() != "force" || !it->is_boolean())
      return respond(
          ErrorResponse(Status::InvalidArgument("the body takes only {force: true|false}")));
  CommitPlan(svc_.memory.Decay(body->value("force", false), svc_.engine.clock().Now()), respond);
}

void Api::MemoryStats(HttpRequest&, Responder respond) {
  auto out = svc_.memory.Stats(svc_.engine.clock().Now());
  if (!out.ok()) return respond(ErrorResponse(out.status()));
  respond(HttpResponse::Json(200, *out));
}

void Api::Embed(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  for (auto it = body->begin(); it != body->end(); ++it)
    if (it.key() != "all" || !it->is_boolean())
      return respond(
          ErrorResponse(Status::InvalidArgument("the body takes only {all: true|false}")));
  ReadEmbedTexts(
      std::make_shared<memory::EmbedWork>(svc_.memory.EmbedIds(body->value("all", false))),
      std::move(respond));
}

void Api::ReadEmbedTexts(std::shared_ptr<memory::EmbedWork> work, Responder respond) {
  const size_t end = std::min(work->ids.size(), work->texts.size() + kEmbedReadIds);
  Status read = svc_.memory.ReadEmbedTexts(work.get(), end);
  if (!read.ok()) return respond(ErrorResponse(read));
  // The next slice behind whatever the loop has queued meanwhile.
  if (end < work->ids.size())
    return boost::asio::post(svc_.ioc, [this, work, respond] { ReadEmbedTexts(work, respond); });
  std::vector<std::string> texts = std::move(work->texts);
  std::shared_ptr<const memory::EmbedWork> shared = std::move(work);
  svc_.embed.Run(
      std::move(texts), memory::EmbedRole::kPassage, [this, shared, respond](memory::Embedded e) {
        if (!e.vectors.ok())
          return respond(
              ErrorResponse(e.vectors.status().WithContext("embedding with " + e.embedder_id)));
        auto piece = std::make_shared<EmbedPiece>();
        piece->work = shared;
        piece->vectors = std::move(*e.vectors);
        piece->embedder_id = e.embedder_id;
        CommitEmbedPiece(std::move(piece), respond);
      });
}

void Api::CommitEmbedPiece(std::shared_ptr<EmbedPiece> p, Responder respond) {
  const size_t begin = p->next;
  const size_t end = std::min(p->work->ids.size(), begin + kEmbedPieceIds);
  p->next = end;
  auto plan = svc_.memory.PlanEmbedded(*p->work, p->vectors, p->embedder_id, begin, end);
  if (!plan.ok()) return respond(ErrorResponse(plan.status()));
  p->embedded += plan->answer.value("embedded", size_t{0});
  auto answer = [p] {
    nlohmann::json a = {{"embedded", p->embedded}, {"embedder", p->embedder_id}};
    if (p->events_written > 0) {  // as CommitPlan answers: only when something was written
      a["events_written"] = p->events_written;
      a["seq"] = p->seq;
    }
    return a;
  };
  if (plan->events.empty()) {  // every one of this piece forgotten meanwhile
    if (end == p->work->ids.size()) return respond(HttpResponse::Json(200, answer()));
    return CommitEmbedPiece(std::move(p), respond);
  }
  // The next piece is planned once this one is durable: whatever the loop
  // was asked meanwhile goes between the two.
  Status s = svc_.engine.Submit(
      std::move(plan->events),
      [this, p, respond, answer, end](const Status& st, std::span<const state::Event> done) {
        if (!st.ok()) return respond(ErrorResponse(st));
        p->events_written += done.size();
        p->seq = done.back().seq;
        if (end == p->work->ids.size()) return respond(HttpResponse::Json(200, answer()));
        // Behind what the loop has queued, not within this completion.
        boost::asio::post(svc_.ioc, [this, p, respond] { CommitEmbedPiece(p, respond); });
      });
  if (!s.ok()) respond(ErrorResponse(s));
}

void Api::ExportMemory(HttpRequest&, Responder respond) {
  auto out = svc_.memory.Export();
  if (!out.ok()) return respond(ErrorResponse(out.status()));
  respond(HttpResponse::Json(200, *out));
}

void Api::ImportMemory(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  CommitPlan(svc_.memory.Import(*body), respond);
}

void Api::Ingest(HttpRequest& req, Responder respond) {
  auto body = Body(req);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  // The file work on the ingest worker; the plan and commit here, in batches.
  svc_.ingest.Run(std::move(*body), [this, respond](Result<memory::PreparedIngest> prepared) {
    if (!prepared.ok()) return respond(ErrorResponse(prepared.status()));
    if (!prepared->refusal.empty())
      return respond(HttpResponse::Error(403, "forbidden", prepared->refusal));
    CommitIngest(std::make_shared<IngestCommit>(IngestCommit{svc_, std::move(*prepared), respond}));
  });
}

void Api::GetMemory(HttpRequest& req, Responder respond) {
  auto out = svc_.memory.Get(Param(req, "id"), svc_.engine.clock().Now());
  if (!out.ok()) return respond(ErrorResponse(out.status()));
  respond(HttpResponse::Json(200, *out));
}

void Api::GetContext(HttpRequest& req, Responder respond) {
  auto budget = QueryCount(req, "budget_tokens", 2000, 1000000);
  if (!budget.ok()) return respond(ErrorResponse(budget.status()));
  auto attention = Attention();
  if (!attention.ok()) return respond(ErrorResponse(attention.status()));
  auto in = std::make_shared<ContextInput>();
  in->budget = *budget;
  in->attention = std::move(*attention);
  // Without a query, the focused thread's goal is what to remember about.
  in->query = Query(req, "query").value_or("");
  if (in->query.empty() && in->attention["thread"].is_object())
    in->query = in->attention["thread"].value("goal", "");
  // Recall on the loop, then the world model's texts on its worker -- for
  // at most kContextWorldWaitMs: behind a daily pass (an llm extractor can
  // take minutes) the bundle goes without them, and says so.
  auto world = [this, in, respond] {
    auto answered = std::make_shared<bool>(false);
    auto deadline = std::make_shared<boost::asio::steady_timer>(
        svc_.ioc, std::chrono::milliseconds(kContextWorldWaitMs));
    deadline->async_wait([in, respond, answered](const boost::system::error_code& ec) {
      if (ec || *answered) return;
      *answered = true;
      json out = ContextBundle(*in);
      out["note"] =
          "the world model is busy (a daily pass runs): entity pages and MEMORY.md "
          "are left out of this bundle";
      respond(HttpResponse::Json(200, out));
    });
    svc_.world.Run([query = in->query, focus = FocusText(in->attention)](
                       world::WorldModel& w) { return w.Context(query, focus); },
                   [this, in, respond, answered, deadline](Result<json> found) {
                     deadline->cancel();
                     if (*answered) return;
                     *answered = true;
                     if (found.ok())
                       in->world = std::move(*found);
                     else
                       log_->warn("context: the world model: {}", found.status().ToString());
                     respond(HttpResponse::Json(200, ContextBundle(*in)));
                   });
  };
  if (in->query.empty()) return world();
  memory::RecallRequest rr;
  rr.query = in->query;
  rr.k = 20;
  rr.reinforce = false;  // reading the context is not recalling on purpose
  RecallWithArchive(rr, [this, in, world](Result<memory::MemoryPlan> plan) {
    if (plan.ok())
      for (json& m : plan->answer["results"]) in->memories.push_back(std::move(m));
    else
      log_->warn("context: recall failed: {}", plan.status().ToString());
    world();
  });
}

}  // namespace limbic::runtime
