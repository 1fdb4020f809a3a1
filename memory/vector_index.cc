// VectorIndex: a slot-indexed table of vectors scanned exactly, and above
// exact_limit an hnswlib graph whose labels are the slots. The saved form
// (the graph file and <path>.ids) is described in vector_index_file.cc.
//
// hnswlib throws std::runtime_error (and std::bad_alloc); every call into it
// is inside a try block here, and a failure becomes a Status, or, where the
// interface has none (Remove, Search), falls back to the exact scan: the
// graph is only ever an accelerator of what the table can answer.
#include "memory/vector_index.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <filesystem>
#include <queue>
#include <thread>
#include <unordered_map>

#include "memory/embedder.h"
#include "memory/vector_index_file.h"

// hnswlib's headers are not -Wall -Wextra -Wpedantic clean; they also define
// non-inline functions, so only this file may include them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wall"
#pragma GCC diagnostic ignored "-Wextra"
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wunused-function"
#include <hnswlib/hnswlib.h>
#pragma GCC diagnostic pop

namespace limbic::memory {

using Graph = hnswlib::HierarchicalNSW<float>;

namespace {

struct Slot {
  std::string id;
  uint64_t version = 0;
};

// A hit under construction: its score and its slot.
struct SlotHit {
  float score;
  uint32_t slot;
};

std::string What(const std::exception& e) { return std::string("hnswlib: ") + e.what(); }

bool Finite(std::span<const float> v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

// hnswlib's inner-product space with limbic's dot product (embedder.h's
// Dot: AVX2 where the CPU has it; hnswlib's own picks its SIMD at compile
// time, which a portable build leaves at SSE) and hnswlib's distance,
// 1 - dot. The graph's saved format does not depend on the space.
class DotSpace : public hnswlib::SpaceInterface<float> {
 public:
  explicit DotSpace(size_t dims) : dims_(dims) {}
  size_t get_data_size() override { return dims_ * sizeof(float); }
  hnswlib::DISTFUNC<float> get_dist_func() override { return &Distance; }
  void* get_dist_func_param() override { return &dims_; }

 private:
  static float Distance(const void* a, const void* b, const void* dims) {
    return 1.0f - Dot(static_cast<const float*>(a), static_cast<const float*>(b),
                      *static_cast<const size_t*>(dims));
  }
  size_t dims_;
};

}  // namespace

struct VectorIndex::Impl {
  VectorIndexOptions opt;
  // Row s is data[s * dims, (s + 1) * dims); live[s] says whether slot s
  // holds an entry (kept apart from `slots` so the scan touches only bytes).
  std::vector<float> data;
  std::vector<uint8_t> live;
  // Row s quantised (embedder.h's QuantizeVector): codes[s * dims, ...),
  // its scale and its error bound. The exact scan reads these, a quarter
  // of the bytes of `data`, and rescores from `data` only the rows whose
  // bounds say they may be in the answer.
  std::vector<int8_t> codes;
  std::vector<float> code_scale, code_error;
  std::vector<Slot> slots;
  std::vector<uint32_t> free_slots;
  std::unordered_map<std::string, uint32_t> slot_of;
  // The space must outlive the graph, which keeps a pointer into it.
  std::unique_ptr<DotSpace> space;
  std::unique_ptr<Graph> graph;
  // defer_graph: slots whose current vector the graph does not have yet.
  // `pending` may hold a slot more than once or one erased since; queued[s]
  // says whether s is really waiting, queued_count how many are.
  std::vector<uint32_t> pending;
  std::vector<uint8_t> queued;
  size_t queued_count = 0;
  mutable bool dirty = false;

  explicit Impl(VectorIndexOptions o)
      : opt(o), space(std::make_unique<DotSpace>(o.dims)) {}

  const float* Row(uint32_t s) const { return data.data() + size_t{s} * opt.dims; }
  // Sizes the tables for `n` slots.
  void Resize(size_t n) {
    live.resize(n);
    queued.resize(n);
    data.resize(n * opt.dims);
    codes.resize(n * opt.dims);
    code_scale.resize(n);
    code_error.resize(n);
  }
  // Quantises row s (after its vector changed).
  void Encode(uint32_t s) {
    code_scale[s] = QuantizeVector(RowSpan(s), codes.data() + size_t{s} * opt.dims, &code_error[s]);
  }
  std::span<const float> RowSpan(uint32_t s) const { return {Row(s), opt.dims}; }
  bool UseGraph() const { return graph && slot_of.size() > opt.exact_limit; }

  // Best first: higher score, then smaller id.
  bool Better(const SlotHit& a, const SlotHit& b) const {
    if (a.score != b.score) return a.score > b.score;
    return slots[a.slot].id < slots[b.slot].id;
  }

  std::vector<VectorHit> Hits(std::vector<SlotHit> c, size_t k) const {
    std::sort(c.begin(), c.end(), [this](const SlotHit& a, const SlotHit& b) { return Better(a, b); });
    if (c.size() > k) c.resize(k);
    std::vector<VectorHit> out;
    out.reserve(c.size());
    for (const SlotHit& x : c) out.push_back({slots[x.slot].id, x.score});
    return out;
  }

  std::vector<VectorHit> Exact(std::span<const float> q, size_t k, float threshold,
                               const std::function<bool(const std::string&)>& filter) const;
  std::vector<VectorHit> Approximate(std::span<const float> q, size_t k, float threshold,
                                     const std::function<bool(const std::string&)>& filter) const;
  Status BuildGraph();
  // defer_graph: an empty graph, every entry queued for it.
  Status StartGraph();
  void Queue(uint32_t slot) {
    if (queued[slot]) return;
    queued[slot] = 1;
    ++queued_count;
    pending.push_back(slot);
  }
  void Unqueue(uint32_t slot) {
    if (!queued[slot]) return;
    queued[slot] = 0;
    --queued_count;
  }
  void DropGraph() {
    graph.reset();
    pending.clear();
    std::fill(queued.begin(), queued.end(), 0);
    queued_count = 0;
  }
  // The queued entries' best k, scored exactly (a scan of them alone).
  std::vector<SlotHit> QueuedHits(std::span<const float> q, size_t k, float threshold,
                                  const std::function<bool(const std::string&)>& filter) const;
  Status GraphAdd(uint32_t slot);
  void GraphRemove(uint32_t slot);
  void Erase(uint32_t slot);
};

std::vector<VectorHit> VectorIndex::Impl::Exact(
    std::span<const float> q, size_t k, float threshold,
    const std::function<bool(const std::string&)>& filter) const {
  // Pass 1, over the quantised rows: each row's exact score lies within
  // `radius` of its estimate. A row whose upper bound is under the
  // threshold, or (unfiltered) under the k-th best lower bound seen, cannot
  // be in the answer; the others are candidates.
  const size_t dims = opt.dims;
  const float qnorm = std::sqrt(std::max(0.0f, Dot(q.data(), q.data(), dims)));
  std::vector<std::pair<float, uint32_t>> cand;  // (upper bound, slot)
  std::priority_queue<float, std::vector<float>, std::greater<float>> lows;  // k best lower bounds
  float floor = threshold;
  const uint32_t n = static_cast<uint32_t>(slots.size());
  for (uint32_t s = 0; s < n; ++s) {
    if (!live[s]) continue;
    const float estimate = code_scale[s] * DotCodes(codes.data() + size_t{s} * dims, q.data(), dims);
    const float radius = qnorm * code_error[s];
    if (estimate + radius < floor) continue;
    cand.emplace_back(estimate + radius, s);
    if (filter) continue;  // a filter may reject any row: no lower bound holds
    const float low = estimate - radius;
    if (lows.size() < k) {
      lows.push(low);
    } else if (low > lows.top()) {
      lows.pop();
      lows.push(low);
    }
    if (lows.size() == k) floor = std::max(threshold, lows.top());
  }
  // Pass 2: candidates by upper bound, best first, scored exactly, until
  // none left can enter. A bounded heap whose top is the worst hit kept;
  // only rows that would enter pay for the filter (maybe a map lookup).
  std::make_heap(cand.begin(), cand.end());
  auto worse = [this](const SlotHit& a, const SlotHit& b) { return Better(a, b); };
  std::priority_queue<SlotHit, std::vector<SlotHit>, decltype(worse)> heap(worse);
  while (!cand.empty()) {
    std::pop_heap(cand.begin(), cand.end());
    const auto [upper, s] = cand.back();
    cand.pop_back();
    if (upper < floor || (heap.size() == k && upper < heap.top().score)) break;
    const SlotHit c{Cosine(RowSpan(s), q), s};
    if (c.score < threshold) continue;
    if (heap.size() == k && !Better(c, heap.top())) continue;
    if (filter && !filter(slots[s].id)) continue;
    heap.push(c);
    if (heap.size() > k) heap.pop();
  }
  std::vector<SlotHit> kept;
  kept.reserve(heap.size());
  for (; !heap.empty(); heap.pop()) kept.push_back(heap.top());
  return Hits(std::move(kept), k);
}

std::vector<VectorHit> VectorIndex::Impl::Approximate(
    std::span<const float> q, size_t k, float threshold,
    const std::function<bool(const std::string&)>& filter) const {
  // Without a filter the graph's best k are the answer; with one, k * 4
  // candidates usually hold k that pass. When they do not, and the graph
  // may hold more above the threshold, the exact scan answers: asking the
  // graph for "all" would visit every node anyway, more slowly.
  // While more than half wait for the graph, the exact scan is the
  // cheaper answer (and the same one).
  if (queued_count * 2 > slot_of.size()) return Exact(q, k, threshold, filter);
  const size_t ask = filter ? k * 4 : k;
  std::priority_queue<std::pair<float, hnswlib::labeltype>> found;
  try {
    graph->setEf(std::max(opt.ef_search, ask));
    found = graph->searchKnn(q.data(), ask);
  } catch (const std::exception&) {
    return Exact(q, k, threshold, filter);
  }
  const size_t returned = found.size();
  std::vector<SlotHit> pass;
  float lowest = 1;
  for (; !found.empty(); found.pop()) {
    const uint32_t s = static_cast<uint32_t>(found.top().second);
    if (queued[s]) continue;  // an older vector of it: the queued scan scores it
    // Rescored from the table: the same figure the exact scan gives.
    const SlotHit c{Cosine(RowSpan(s), q), s};
    lowest = std::min(lowest, c.score);
    if (c.score >= threshold && (!filter || filter(slots[s].id))) pass.push_back(c);
  }
  if (pass.size() < k && filter && returned == ask && lowest >= threshold)
    return Exact(q, k, threshold, filter);
  if (queued_count > 0) {
    std::vector<SlotHit> more = QueuedHits(q, k, threshold, filter);
    pass.insert(pass.end(), more.begin(), more.end());
  }
  return Hits(std::move(pass), k);
}

std::vector<SlotHit> VectorIndex::Impl::QueuedHits(
    std::span<const float> q, size_t k, float threshold,
    const std::function<bool(const std::string&)>& filter) const {
  std::vector<SlotHit> hits;
  for (uint32_t s : pending) {
    if (!queued[s]) continue;
    const SlotHit c{Cosine(RowSpan(s), q), s};
    if (c.score >= threshold) hits.push_back(c);
  }
  std::sort(hits.begin(), hits.end(), [this](const SlotHit& a, const SlotHit& b) { return Better(a, b); });
  // A slot queued, erased and queued again is in `pending` twice; its two
  // hits (same score, same id) are adjacent now.
  hits.erase(std::unique(hits.begin(), hits.end(),
                         [](const SlotHit& a, const SlotHit& b) { return a.slot == b.slot; }),
             hits.end());
  std::vector<SlotHit> kept;
  for (const SlotHit& c : hits) {
    if (kept.size() == k) break;
    if (!filter || filter(slots[c.slot].id)) kept.push_back(c);
  }
  return kept;
}

Status VectorIndex::Impl::BuildGraph() {
  std::vector<uint32_t> todo;
  todo.reserve(slot_of.size());
  for (uint32_t s = 0; s < slots.size(); ++s)
    if (live[s]) todo.push_back(s);
  try {
    auto g = std::make_unique<Graph>(space.get(), slots.size() + slots.size() / 4 + 16, opt.m,
                                     opt.ef_construction);
    if (!todo.empty()) g->addPoint(Row(todo[0]), todo[0]);
    // hnswlib's addPoint may run concurrently for distinct labels. Two
    // threads, interleaved, so each sees the same mix of early and late
    // rows; an exception is carried out of its thread and rethrown.
    std::exception_ptr error[2];
    auto add = [&](size_t first, int t) {
      try {
        for (size_t i = first; i < todo.size(); i += 2) g->addPoint(Row(todo[i]), todo[i]);
      } catch (...) {
        error[t] = std::current_exception();
      }
    };
    std::thread other(add, 2, 1);
    add(1, 0);
    other.join();
    for (const auto& e : error)
      if (e) std::rethrow_exception(e);
    graph = std::move(g);
  } catch (const std::exception& e) {
    return Status::Internal("vector index: building the graph: " + What(e));
  }
  dirty = true;
  return Status::OK();
}

Status VectorIndex::Impl::StartGraph() {
  DropGraph();
  try {
    graph = std::make_unique<Graph>(space.get(), slots.size() + slots.size() / 4 + 16, opt.m,
                                    opt.ef_construction);
  } catch (const std::exception& e) {
    return Status::Internal("vector index: making the graph: " + What(e));
  }
  for (uint32_t s = 0; s < slots.size(); ++s)
    if (live[s]) Queue(s);
  dirty = true;
  return Status::OK();
}

Status VectorIndex::Impl::GraphAdd(uint32_t slot) {
  try {
    if (graph->cur_element_count >= graph->max_elements_ && !graph->label_lookup_.count(slot))
      graph->resizeIndex(std::max<size_t>(graph->max_elements_ * 2, 16));
    // An existing label (a replaced vector, or a reused slot marked
    // deleted) is updated in place and undeleted.
    graph->addPoint(Row(slot), slot);
  } catch (const std::exception& e) {
    // The table has the entry; a later Upsert past the limit rebuilds.
    DropGraph();
    return Status::Internal("vector index: updating the graph: " + What(e));
  }
  return Status::OK();
}

void VectorIndex::Impl::GraphRemove(uint32_t slot) {
  Unqueue(slot);
  // A queued slot may never have been in the graph, or be there marked
  // deleted already (erased, reused, erased again before its insert).
  auto it = graph->label_lookup_.find(slot);
  if (it == graph->label_lookup_.end() || graph->isMarkedDeleted(it->second)) return;
  try {
    graph->markDelete(slot);
  } catch (const std::exception&) {
    DropGraph();  // out of step with the table: rebuild at the next Upsert past the limit
  }
}

void VectorIndex::Impl::Erase(uint32_t slot) {
  slot_of.erase(slots[slot].id);
  slots[slot] = Slot{};
  live[slot] = 0;
  free_slots.push_back(slot);
  if (graph) GraphRemove(slot);
  dirty = true;
}

VectorIndex::VectorIndex(VectorIndexOptions options) : impl_(std::make_unique<Impl>(options)) {}
VectorIndex::~VectorIndex() = default;

Status VectorIndex::Upsert(const std::string& id, uint64_t version, std::span<const float> v) {
  Impl& im = *impl_;
  if (v.size() != im.opt.dims)
    return Status::InvalidArgument("vector index: " + id + " has " + std::to_string(v.size()) +
                                   " dims, not " + std::to_string(im.opt.dims));
  if (!Finite(v))
    return Status::InvalidArgument("vector index: " + id + " has a component that is not a finite number");
  uint32_t s;
  if (auto it = im.slot_of.find(id); it != im.slot_of.end()) {
    s = it->second;
    if (im.slots[s].version == version) return Status::OK();
  } else if (!im.free_slots.empty()) {
    s = im.free_slots.back();
    im.free_slots.pop_back();
  } else {
    s = static_cast<uint32_t>(im.slots.size());
    im.slots.emplace_back();
    im.Resize(im.slots.size());
  }
  im.slots[s] = Slot{id, version};
  im.live[s] = 1;
  im.slot_of[id] = s;
  std::memcpy(im.data.data() + size_t{s} * im.opt.dims, v.data(), v.size() * sizeof(float));
  im.Encode(s);
  im.dirty = true;
  if (im.graph) {
    if (!im.opt.defer_graph) return im.GraphAdd(s);
    im.Queue(s);
    return Status::OK();
  }
  if (im.slot_of.size() > im.opt.exact_limit) return im.opt.defer_graph ? im.StartGraph() : im.BuildGraph();
  return Status::OK();
}

size_t VectorIndex::graph_backlog() const { return impl_->queued_count; }

Status VectorIndex::GraphStep(size_t max) {
  Impl& im = *impl_;
  for (size_t done = 0; done < max && im.graph && !im.pending.empty();) {
    const uint32_t s = im.pending.back();
    im.pending.pop_back();
    if (!im.queued[s]) continue;
    im.Unqueue(s);
    LIMBIC_RETURN_IF_ERROR(im.GraphAdd(s));  // on failure it dropped the graph and queue
    im.dirty = true;
    ++done;
  }
  if (!im.graph || im.queued_count == 0) im.pending.clear();
  return Status::OK();
}

void VectorIndex::Remove(const std::string& id) {
  if (auto it = impl_->slot_of.find(id); it != impl_->slot_of.end()) impl_->Erase(it->second);
}

void VectorIndex::RetainOnly(const std::vector<std::string>& keep) {
  for (uint32_t s = 0; s < impl_->slots.size(); ++s)
    if (impl_->live[s] && !std::binary_search(keep.begin(), keep.end(), impl_->slots[s].id))
      impl_->Erase(s);
}

bool VectorIndex::Contains(const std::string& id) const { return impl_->slot_of.count(id) > 0; }
size_t VectorIndex::size() const { return impl_->slot_of.size(); }
bool VectorIndex::approximate() const { return impl_->UseGraph(); }
bool VectorIndex::dirty() const { return impl_->dirty; }
void VectorIndex::set_ef_search(size_t ef) { impl_->opt.ef_search = std::max<size_t>(ef, 1); }

std::vector<VectorHit> VectorIndex::Search(std::span<const float> query, size_t k, float threshold,
                                           const std::function<bool(const std::string&)>& filter) const {
  k = std::min(k, impl_->slot_of.size());  // also keeps k * 4 and ef sane
  if (k == 0 || query.size() != impl_->opt.dims || !Finite(query)) return {};
  if (impl_->UseGraph()) return impl_->Approximate(query, k, threshold, filter);
  return impl_->Exact(query, k, threshold, filter);
}

std::vector<VectorHit> VectorIndex::SearchExact(
    std::span<const float> query, size_t k, float threshold,
    const std::function<bool(const std::string&)>& filter) const {
  k = std::min(k, impl_->slot_of.size());
  if (k == 0 || query.size() != impl_->opt.dims || !Finite(query)) return {};
  return impl_->Exact(query, k, threshold, filter);
}

Status VectorIndex::Save(const std::string& relative_path) const {
  const Impl& im = *impl_;
  if (im.queued_count > 0)
    return Status::FailedPrecondition("vector index: " + std::to_string(im.queued_count) +
                                      " entries are still queued for the graph");
  // Absolute, so that the directory synced after the renames is never "".
  const std::string path = std::filesystem::absolute(relative_path).string();
  Env* env = Env::Default();
  IdsFile file;
  file.dims = static_cast<uint32_t>(im.opt.dims);
  file.has_graph = im.graph != nullptr;
  file.slots = im.slots.size();
  file.entries.reserve(im.slot_of.size());
  for (uint32_t s = 0; s < im.slots.size(); ++s) {
    if (!im.live[s]) continue;
    file.entries.push_back({im.slots[s].id, im.slots[s].version, s});
    if (!file.has_graph) file.vectors.insert(file.vectors.end(), im.Row(s), im.Row(s) + im.opt.dims);
  }

  const std::string graph_tmp = path + ".tmp";
  if (file.has_graph) {
    const Graph& g = *im.graph;
    // saveIndex checks no write: compare the size it must have written
    // (its 96-byte header, the base layer, and each node's upper links).
    uint64_t expected = 96 + g.cur_element_count * g.size_data_per_element_;
    for (size_t i = 0; i < g.cur_element_count; ++i)
      expected += 4 + (g.element_levels_[i] > 0 ? g.size_links_per_element_ * g.element_levels_[i] : 0);
    try {
      im.graph->saveIndex(graph_tmp);
    } catch (const std::exception& e) {
      return Status::IOError("vector index: saving " + graph_tmp + ": " + What(e));
    }
    auto sum = ChecksumFile(env, graph_tmp);
    if (!sum.ok()) return sum.status();
    if (sum->bytes != expected)
      return Status::IOError("vector index: " + graph_tmp + " is " + std::to_string(sum->bytes) +
                             " bytes, not " + std::to_string(expected) + " (disk full?)");
    file.graph_bytes = sum->bytes;
    file.graph_checksum = sum->checksum;
    // saveIndex does not sync; reopening the file to sync it does.
    auto f = env->NewAppendableFile(graph_tmp);
    if (!f.ok()) return f.status();
    LIMBIC_RETURN_IF_ERROR((*f)->Sync());
    LIMBIC_RETURN_IF_ERROR((*f)->Close());
    LIMBIC_RETURN_IF_ERROR(env->RenameFile(graph_tmp, path));
  }
  // The ids file goes last: it names the graph's checksum, so a crash
  // between the two renames leaves a pair that Load calls Corruption.
  LIMBIC_RETURN_IF_ERROR(env->WriteFileAtomic(path + ".ids", EncodeIdsFile(file), FileDurability::kSynced));
  if (!file.has_graph && env->FileExists(path)) (void)env->RemoveFile(path);  // a stale graph
  im.dirty = false;
  return Status::OK();
}

Status VectorIndex::Load(const std::string& path) {
  Env* env = Env::Default();
  const std::string ids_path = path + ".ids";
  if (!env->FileExists(ids_path)) return Status::NotFound("vector index: no " + ids_path);
  auto bytes = env->ReadFileToString(ids_path);
  if (!bytes.ok()) return bytes.status();
  auto decoded = DecodeIdsFile(*bytes);
  if (!decoded.ok()) return decoded.status().WithContext(ids_path);
  IdsFile& file = *decoded;
  const size_t dims = impl_->opt.dims;
  if (file.dims != dims)
    return Status::Corruption(ids_path + ": vectors of " + std::to_string(file.dims) +
                              " dims, not " + std::to_string(dims));

  // Loaded into a fresh Impl, swapped in only when whole.
  auto im = std::make_unique<Impl>(impl_->opt);
  im->slots.resize(file.slots);
  im->Resize(file.slots);
  for (size_t i = 0; i < file.entries.size(); ++i) {
    IdsFileEntry& e = file.entries[i];
    im->live[e.slot] = 1;
    im->slot_of[e.id] = e.slot;
    im->slots[e.slot] = Slot{std::move(e.id), e.version};
    if (!file.has_graph) std::memcpy(im->data.data() + e.slot * dims, &file.vectors[i * dims], dims * 4);
  }
  for (uint32_t s = static_cast<uint32_t>(file.slots); s-- > 0;)
    if (!im->live[s]) im->free_slots.push_back(s);

  if (file.has_graph) {
    if (!env->FileExists(path)) return Status::Corruption(ids_path + " names a graph, but " + path + " is missing");
    auto sum = ChecksumFile(env, path);
    if (!sum.ok()) return sum.status();
    if (sum->bytes != file.graph_bytes || sum->checksum != file.graph_checksum)
      return Status::Corruption(path + ": the graph is damaged or not the one " + ids_path + " names");
    // hnswlib 0.6.2's loading constructor leaves num_deleted_ unset (and
    // loadIndex only adds to it), so the empty constructor, then the field,
    // then loadIndex. Should loadIndex throw, the object's pointers are half
    // set and its destructor would free garbage: it is leaked instead. The
    // checksum above means that takes an allocation failure.
    auto loading = std::make_unique<Graph>(im->space.get());
    loading->num_deleted_ = 0;
    loading->metric_distance_computations = 0;
    loading->metric_hops = 0;
    try {
      loading->loadIndex(path, im->space.get());
    } catch (const std::exception& e) {
      (void)loading.release();
      return Status::Corruption(path + ": " + What(e));
    }
    im->graph = std::move(loading);
    Graph& g = *im->graph;
    if (g.label_offset_ - g.offsetData_ != dims * sizeof(float))
      return Status::Corruption(path + ": the graph's vectors are not of " + std::to_string(dims) + " dims");
    if (g.cur_element_count - g.num_deleted_ != im->slot_of.size())
      return Status::Corruption(path + ": the graph and " + ids_path + " hold different entries");
    for (uint32_t s = 0; s < file.slots; ++s) {
      if (!im->live[s]) continue;
      auto it = g.label_lookup_.find(s);
      if (it == g.label_lookup_.end() || g.isMarkedDeleted(it->second))
        return Status::Corruption(path + ": the graph has no live node for slot " + std::to_string(s));
      std::memcpy(im->data.data() + size_t{s} * dims, g.getDataByInternalId(it->second), dims * 4);
    }
  }
  for (uint32_t s = 0; s < file.slots; ++s)
    if (im->live[s]) im->Encode(s);
  im->dirty = false;
  // Saved under a larger exact_limit: the graph is built now, and the
  // index is dirty so that the next Save keeps it.
  if (!im->graph && im->slot_of.size() > im->opt.exact_limit)
    LIMBIC_RETURN_IF_ERROR(im->opt.defer_graph ? im->StartGraph() : im->BuildGraph());
  impl_ = std::move(im);
  return Status::OK();
}

}  // namespace limbic::memory
