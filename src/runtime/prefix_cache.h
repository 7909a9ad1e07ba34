// A store of cache states keyed by token prefix (DESIGN.md §4b), so a request that resends a
// known prefix (a chat's history, a shared system prompt) restores it instead of computing it.
//
// Keys are hash chains over fixed-size token blocks, as vLLM and SGLang do: the hash after
// block k covers tokens [0, (k+1) * block). A stored state of L tokens is indexed under the
// chain hash of each of its whole blocks, so a lookup walks the request's chain from its
// deepest block down and meets only the states that share those blocks; candidates are then
// compared token by token (a hash collision can cost a look, never a wrong answer).
//
// What a state can serve (PrefixState::can_restore): a program whose caches are all flat
// serves any shorter prefix of a stored state; a ring's snapshot holds only the window
// before its own length, so a state with rings serves exactly its length. A lookup returns
// the longest restorable prefix, never the whole request (its last token must run to give
// logits). The store keeps states within a byte budget, evicting the least recently used.
//
// Disk tier (`serve --cache-dir`, made by create()): every stored state is also written to a
// file (write-through, by a writer thread, so the step thread never waits on the disk; the
// destructor finishes pending writes), in a directory keyed by the program's identity and the
// kv dtype: DIR/<program checksum>-<kv dtype>/. The program checksum is the XXH3-64 of the
// whole program file after its preamble, computed once at export and stored in the preamble,
// so it costs nothing at load and any other program (other weights, other export options) has
// another directory; a file's header repeats checksum and dtype, and is refused if they differ.
// RAM eviction keeps a written state's entry, on disk only; a lookup that picks such an entry
// reads the file back, verifying its checksum. create() indexes the directory by reading the
// files' headers (tokens and shape, not the K/V; a truncated file is caught by its size), most
// recently written or used last; a file that fails (truncated, corrupt, not a snapshot) is
// skipped with a warning and deleted, and the lookup goes on as a miss. Files are kept within
// their own byte budget, least recently used deleted first. One server per directory.
//
// Thread-safe: the scheduler inserts and looks up; metrics readers take the counters.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/cache/cache_set.h"

namespace og::runtime {

struct PrefixCacheOptions {
  int64_t block_tokens = 16;
  uint64_t budget_bytes = 512ull << 20;
  // Disk tier, used by create() only (see the header comment); empty: none.
  std::string dir;
  uint64_t disk_budget_bytes = 4ull << 30;
  uint64_t program_checksum = 0;                    // program::ProgramFile::checksum()
  StorageType kv_type = StorageType::kF32;
  bool fast_math = false;  // Model::fast_math(): the disk directory is the mode's own
  std::function<void(const std::string&)> warn;     // skipped files, failed writes; null: stderr
};

struct PrefixMatch {
  std::shared_ptr<const PrefixState> state;  // null: no hit
  int64_t length = 0;                        // tokens to restore from it
};

struct PrefixCacheCounters {
  uint64_t queries = 0;
  uint64_t hits = 0;
  uint64_t hit_tokens = 0;
  uint64_t query_tokens = 0;
  uint64_t stores = 0;           // states inserted (a state stored again counts again)
  uint64_t entries = 0;          // states indexed (in RAM, on disk or both)
  uint64_t bytes = 0;            // bytes of the states held in RAM
  uint64_t evictions = 0;        // states dropped from RAM
  uint64_t disk_entries = 0;     // states with a file
  uint64_t disk_bytes = 0;       // bytes of those files
  uint64_t disk_loads = 0;       // hits read back from a file
  uint64_t disk_errors = 0;      // files skipped (truncated, corrupt) or writes that failed
};

class PrefixCache {
 public:
  // In RAM only (options.dir is not used).
  explicit PrefixCache(const PrefixCacheOptions& options = {});
  // With the disk tier when options.dir is set: creates DIR/<program>-<kv dtype>/ and indexes
  // the snapshots already there. Fails only when the directory cannot be made.
  static Result<std::shared_ptr<PrefixCache>> create(const PrefixCacheOptions& options);
  ~PrefixCache();
  PrefixCache(const PrefixCache&) = delete;
  PrefixCache& operator=(const PrefixCache&) = delete;

  // Stores the state of tokens [0, state.length) (tokens.size() >= state.length). A state
  // larger than the whole budget is not stored; the same tokens stored again replace it.
  void insert(std::span<const int32_t> tokens, std::shared_ptr<const PrefixState> state);
  // The longest restorable prefix of `tokens`, shorter than tokens.size(). A state on disk
  // only is read back here.
  PrefixMatch lookup(std::span<const int32_t> tokens);
  // Blocks until every file write queued so far is done (tests; the destructor does it too).
  void flush();

  PrefixCacheCounters counters() const;
  const PrefixCacheOptions& options() const { return options_; }

 private:
  struct Entry {
    std::vector<int32_t> tokens;               // [shape->length]
    std::vector<uint64_t> chain;               // chain hash after each whole block
    std::shared_ptr<const PrefixState> state;  // null: on disk only
    std::shared_ptr<const PrefixState> shape;  // the state without K/V (what it can serve)
    uint64_t serial = 0;                       // names the entry to the writer thread
    std::string file;                          // file name in dir_ once written
    uint64_t file_bytes = 0;                   // 0: no file
    bool writing = false;                      // a write is queued (kept in RAM until done)
  };
  using EntryList = std::list<Entry>;          // most recently used first
  struct WriteJob {
    uint64_t serial = 0;
    std::vector<int32_t> tokens;
    std::shared_ptr<const PrefixState> state;
    std::string file;
  };

  std::vector<uint64_t> chain_hashes(std::span<const int32_t> tokens) const;
  void index(EntryList::iterator it);
  void unindex(EntryList::iterator it);        // drops the entry and deletes its file
  void enforce_budgets();                      // RAM, then disk, least recently used first
  void drop_file(Entry& e);
  Status open_disk();                          // create(): the directory and its index
  void write_loop();
  void warn(const std::string& message) const;
  std::string path_of(const std::string& file) const { return dir_ + "/" + file; }

  PrefixCacheOptions options_;
  mutable std::mutex mu_;
  EntryList entries_;
  // chain hash after block k -> entries holding that block (k is implied by the hash)
  std::unordered_map<uint64_t, std::vector<EntryList::iterator>> index_;
  std::vector<EntryList::iterator> short_;     // entries shorter than one block
  PrefixCacheCounters counters_;
  uint64_t next_serial_ = 1;

  std::string dir_;                            // DIR/<program>-<kv dtype>; empty: no disk tier
  std::deque<WriteJob> jobs_;                  // guarded by mu_
  size_t jobs_running_ = 0;
  bool stopping_ = false;
  std::condition_variable jobs_cv_, jobs_done_;
  std::thread writer_;
};

}  // namespace og::runtime
