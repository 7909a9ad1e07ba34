#include "runtime/prefix_cache.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace og::runtime {
namespace fs = std::filesystem;

namespace {

constexpr const char* kSuffix = ".ogkv";

// A snapshot's file name: its tokens' hash and length (the same tokens give the same name; a
// collision of two token lists is caught when the file's tokens are compared on reading).
std::string file_name(std::span<const int32_t> tokens) {
  return fmt::format("{:016x}-{}{}", XXH3_64bits(tokens.data(), tokens.size_bytes()), tokens.size(), kSuffix);
}

void touch(const std::string& path) {
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // LRU order across restarts
}

}  // namespace

PrefixCache::PrefixCache(const PrefixCacheOptions& options) : options_(options) {
  options_.block_tokens = std::max<int64_t>(1, options_.block_tokens);
}

Result<std::shared_ptr<PrefixCache>> PrefixCache::create(const PrefixCacheOptions& options) {
  auto cache = std::make_shared<PrefixCache>(options);
  if (!options.dir.empty()) OG_TRY(cache->open_disk());
  return cache;
}

PrefixCache::~PrefixCache() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  jobs_cv_.notify_all();
  if (writer_.joinable()) writer_.join();  // it finishes every queued write first
}

void PrefixCache::warn(const std::string& message) const {
  if (options_.warn) options_.warn(message);
  else std::fprintf(stderr, "offgraph: prefix cache: %s\n", message.c_str());
}

std::vector<uint64_t> PrefixCache::chain_hashes(std::span<const int32_t> tokens) const {
  const auto B = static_cast<size_t>(options_.block_tokens);
  std::vector<uint64_t> chain;
  uint64_t h = 0x6f66666772617068ull;  // any fixed seed
  for (size_t k = 0; (k + 1) * B <= tokens.size(); ++k) {
    h = XXH3_64bits_withSeed(tokens.data() + k * B, B * sizeof(int32_t), h);
    chain.push_back(h);
  }
  return chain;
}

void PrefixCache::index(EntryList::iterator it) {
  for (uint64_t h : it->chain) index_[h].push_back(it);
  if (it->chain.empty()) short_.push_back(it);
  if (it->state) counters_.bytes += it->state->bytes();
  ++counters_.entries;
}

void PrefixCache::drop_file(Entry& e) {
  if (e.file_bytes == 0) return;
  std::error_code ec;
  fs::remove(path_of(e.file), ec);
  counters_.disk_bytes -= e.file_bytes;
  --counters_.disk_entries;
  e.file_bytes = 0;
}

void PrefixCache::unindex(EntryList::iterator it) {
  auto drop = [&](std::vector<EntryList::iterator>& v) { v.erase(std::remove(v.begin(), v.end(), it), v.end()); };
  for (uint64_t h : it->chain) {
    auto found = index_.find(h);
    if (found == index_.end()) continue;
    drop(found->second);
    if (found->second.empty()) index_.erase(found);
  }
  if (it->chain.empty()) drop(short_);
  if (it->state) counters_.bytes -= it->state->bytes();
  drop_file(*it);  // a queued write of it finds no entry and deletes its file
  --counters_.entries;
  entries_.erase(it);
}

void PrefixCache::enforce_budgets() {
  // RAM: a state with a file stays indexed on disk only; one being written waits for its write.
  for (auto it = entries_.end(); counters_.bytes > options_.budget_bytes && it != entries_.begin();) {
    --it;
    if (!it->state || it->writing) continue;
    ++counters_.evictions;
    if (it->file_bytes > 0) {
      counters_.bytes -= it->state->bytes();
      it->state.reset();
    } else {
      auto dead = it++;
      unindex(dead);
    }
  }
  // Disk: delete the least recently used files; an entry left with neither goes.
  for (auto it = entries_.end(); counters_.disk_bytes > options_.disk_budget_bytes && it != entries_.begin();) {
    --it;
    if (it->file_bytes == 0) continue;
    drop_file(*it);
    if (!it->state) {
      auto dead = it++;
      unindex(dead);
    }
  }
}

void PrefixCache::insert(std::span<const int32_t> tokens, std::shared_ptr<const PrefixState> state) {
  if (!state || state->length <= 0 || static_cast<int64_t>(tokens.size()) < state->length) return;
  const uint64_t bytes = state->bytes();
  if (bytes > options_.budget_bytes) return;
  const auto L = static_cast<size_t>(state->length);
  Entry e{.tokens = std::vector<int32_t>(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(L)),
          .chain = chain_hashes(tokens.first(L)),
          .state = std::move(state)};
  e.shape = std::make_shared<const PrefixState>(e.state->shape());
  std::lock_guard lock(mu_);
  ++counters_.stores;
  // The same tokens stored again: the new state replaces the old.
  const std::vector<EntryList::iterator>* same = &short_;
  if (!e.chain.empty()) {
    auto found = index_.find(e.chain.back());
    same = found == index_.end() ? nullptr : &found->second;
  }
  if (same != nullptr)
    for (auto it : *same)
      if (it->tokens == e.tokens) {
        unindex(it);
        break;
      }
  // A state that serves every shorter prefix (flat caches only) makes the entries it extends
  // redundant: drop those that are prefixes of its tokens and serve the same way.
  if (e.shape->can_restore(0)) {
    std::vector<EntryList::iterator> subsumed;
    auto scan = [&](const std::vector<EntryList::iterator>& v) {
      for (auto it : v)
        if (it->tokens.size() <= e.tokens.size() && it->shape->can_restore(0) &&
            std::equal(it->tokens.begin(), it->tokens.end(), e.tokens.begin()) &&
            std::find(subsumed.begin(), subsumed.end(), it) == subsumed.end())
          subsumed.push_back(it);
    };
    for (uint64_t h : e.chain)
      if (auto found = index_.find(h); found != index_.end()) scan(found->second);
    scan(short_);
    for (auto it : subsumed) unindex(it);
  }
  e.serial = next_serial_++;
  if (!dir_.empty() && e.state->kv_type == options_.kv_type) {
    e.writing = true;
    jobs_.push_back({.serial = e.serial, .tokens = e.tokens, .state = e.state, .file = file_name(e.tokens)});
    jobs_cv_.notify_one();
  }
  entries_.push_front(std::move(e));
  index(entries_.begin());
  enforce_budgets();
}

void PrefixCache::write_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    jobs_cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and every queued write is done
    WriteJob job = std::move(jobs_.front());
    jobs_.pop_front();
    ++jobs_running_;
    lock.unlock();
    const std::string path = path_of(job.file);
    Status written = save_prefix_state(path, options_.program_checksum, *job.state, job.tokens);
    std::error_code ec;
    const uint64_t size = written.is_ok() ? fs::file_size(path, ec) : 0;
    lock.lock();
    --jobs_running_;
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.serial == job.serial; });
    if (it == entries_.end()) {  // replaced, extended or evicted meanwhile
      if (written.is_ok()) fs::remove(path, ec);
    } else {
      it->writing = false;
      if (!written.is_ok() || size == 0) {
        ++counters_.disk_errors;
        warn(fmt::format("not kept on disk: {}", written.is_ok() ? path + ": empty" : written.message()));
      } else {
        it->file = job.file;
        it->file_bytes = size;
        counters_.disk_bytes += size;
        ++counters_.disk_entries;
      }
      enforce_budgets();
    }
    jobs_done_.notify_all();
  }
}

void PrefixCache::flush() {
  std::unique_lock lock(mu_);
  jobs_done_.wait(lock, [&] { return jobs_.empty() && jobs_running_ == 0; });
}

Status PrefixCache::open_disk() {
  // States computed in another math mode hold other numbers: each mode has its own directory.
  dir_ = fmt::format("{}/{:016x}-{}{}", options_.dir, options_.program_checksum, storage_type_tag(options_.kv_type),
                     options_.fast_math ? "-fast" : "");
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_)) {
    const std::string d = dir_;
    dir_.clear();
    return resource_error("--cache-dir: cannot create {}: {}", d, ec ? ec.message() : "not a directory");
  }
  struct Found {
    fs::file_time_type time;
    std::string file;
    StoredPrefix prefix;
  };
  std::vector<Found> found;
  for (const auto& de : fs::directory_iterator(dir_, ec)) {
    const std::string name = de.path().filename().string(), path = de.path().string();
    if (name.ends_with(".partial")) {  // a write that was interrupted
      fs::remove(de.path(), ec);
      continue;
    }
    if (!name.ends_with(kSuffix) || !de.is_regular_file(ec)) continue;
    auto p = read_prefix_shape(path, options_.program_checksum, options_.kv_type);
    if (!p.is_ok()) {
      ++counters_.disk_errors;
      warn(fmt::format("skipping (deleted) {}", p.status().message()));
      fs::remove(de.path(), ec);
      continue;
    }
    found.push_back({.time = de.last_write_time(ec), .file = name, .prefix = std::move(*p)});
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.time < b.time; });
  std::lock_guard lock(mu_);
  for (Found& f : found) {  // oldest first, so the newest ends most recently used
    Entry e{.tokens = std::move(f.prefix.tokens),
            .shape = std::make_shared<const PrefixState>(std::move(f.prefix.state)),
            .serial = next_serial_++,
            .file = f.file,
            .file_bytes = f.prefix.file_bytes};
    e.chain = chain_hashes(e.tokens);
    entries_.push_front(std::move(e));
    index(entries_.begin());
    counters_.disk_bytes += f.prefix.file_bytes;
    ++counters_.disk_entries;
  }
  enforce_budgets();
  writer_ = std::thread([this] { write_loop(); });
  return Status::ok();
}

PrefixMatch PrefixCache::lookup(std::span<const int32_t> tokens) {
  const auto chain = chain_hashes(tokens);
  std::lock_guard lock(mu_);
  ++counters_.queries;
  counters_.query_tokens += tokens.size();
  const int64_t limit = static_cast<int64_t>(tokens.size()) - 1;  // the last token must run
  if (limit <= 0) return {};
  // The longest restorable length an entry offers this request.
  auto offer = [&](const Entry& e) -> int64_t {
    const auto shared = static_cast<int64_t>(
        std::mismatch(e.tokens.begin(), e.tokens.end(), tokens.begin(), tokens.end()).first - e.tokens.begin());
    const int64_t n = std::min(shared, limit);
    if (e.shape->can_restore(n)) return n;                             // flat caches: any prefix
    return e.shape->length <= n && e.shape->can_restore(e.shape->length) ? e.shape->length : 0;
  };
  for (;;) {  // again when a file on disk turns out unusable
    // Deepest shared block first: a usable entry there beats any found at a shallower block.
    EntryList::iterator best = entries_.end();
    int64_t best_len = 0;
    auto consider = [&](const std::vector<EntryList::iterator>& candidates) {
      for (auto it : candidates)
        if (const int64_t n = offer(*it); n > best_len) {
          best_len = n;
          best = it;
        }
    };
    for (size_t k = chain.size(); k-- > 0 && best_len == 0;)
      if (auto found = index_.find(chain[k]); found != index_.end()) consider(found->second);
    if (best_len == 0) consider(short_);
    if (best_len == 0) return {};
    entries_.splice(entries_.begin(), entries_, best);  // most recently used
    if (best->file_bytes > 0) touch(path_of(best->file));
    if (!best->state) {  // on disk only: read it back, checksum verified
      auto loaded = load_prefix_state(path_of(best->file), options_.program_checksum, options_.kv_type);
      if (loaded.is_ok() && loaded->tokens != best->tokens)
        loaded = bad_input("{}: holds other tokens than its index entry", path_of(best->file));
      if (!loaded.is_ok()) {
        ++counters_.disk_errors;
        warn(fmt::format("skipping (deleted) {}", loaded.status().message()));
        unindex(best);
        continue;
      }
      best->state = std::make_shared<const PrefixState>(std::move(loaded->state));
      counters_.bytes += best->state->bytes();
      ++counters_.disk_loads;
    }
    auto state = best->state;
    enforce_budgets();  // may drop this state from RAM again (it stays on disk); we hold it
    ++counters_.hits;
    counters_.hit_tokens += static_cast<uint64_t>(best_len);
    return {.state = std::move(state), .length = best_len};
  }
}

PrefixCacheCounters PrefixCache::counters() const {
  std::lock_guard lock(mu_);
  return counters_;
}

}  // namespace og::runtime
