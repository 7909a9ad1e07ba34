// The binary form of a TokenizerSpec, stored inside programs so loading needs no JSON parse.
//
//   "OGTOKEN\0" | u32 format version | u32 0 | u64 payload bytes | u64 XXH3-64 of payload | payload
//
// The payload is little-endian fixed-width fields in the order of spec.h; the vocabulary,
// merges and lookup tables are raw arrays, so reading them is a copy. The reader checks the
// header, the checksum, every length against the bytes left (before allocating), every enum
// and bool, and UTF-8 of every string; ids and tables are checked when the Tokenizer is built.
#include <cstring>

#include <xxhash.h>

#include "tokenizer/spec.h"
#include "tokenizer/unicode.h"

namespace og::tokenizer {
namespace {

constexpr char kMagic[8] = {'O', 'G', 'T', 'O', 'K', 'E', 'N', '\0'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8 + 8;

class Writer {
 public:
  std::vector<uint8_t> bytes;
  template <typename T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const size_t at = bytes.size();
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &v, sizeof(T));  // little-endian hosts only (x86-64, arm64)
  }
  void flag(bool b) { put<uint8_t>(b ? 1 : 0); }
  void str(std::string_view s) {
    put<uint32_t>(static_cast<uint32_t>(s.size()));
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  void pattern(const PatternSpec& p) {
    str(p.text);
    flag(p.is_regex);
  }
  template <typename T>
  void array(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put<uint32_t>(static_cast<uint32_t>(v.size()));
    const auto* p = reinterpret_cast<const uint8_t*>(v.data());
    bytes.insert(bytes.end(), p, p + v.size() * sizeof(T));
  }
};

// Every read is bounds-checked; the first failure sticks and later reads return zeros.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> b) : b_(b) {}
  bool ok() const { return ok_; }
  const std::string& what() const { return what_; }
  void fail(std::string what) {
    if (ok_) what_ = std::move(what);
    ok_ = false;
  }
  template <typename T>
  T get() {
    T v{};
    if (!ok_ || b_.size() - pos_ < sizeof(T)) {
      fail(fmt::format("truncated at byte {}", pos_));
      return v;
    }
    std::memcpy(&v, b_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  bool flag() {
    const auto v = get<uint8_t>();
    if (v > 1) fail(fmt::format("byte {} is {} where a bool was expected", pos_ - 1, v));
    return v == 1;
  }
  template <typename E>
  E enumerated(uint8_t last) {
    const auto v = get<uint8_t>();
    if (v > last) fail(fmt::format("byte {} holds enum value {} (max {})", pos_ - 1, v, last));
    return static_cast<E>(v);
  }
  // A count of items of at least `min_bytes` each, checked against the bytes left.
  uint32_t count(size_t min_bytes) {
    const auto n = get<uint32_t>();
    if (ok_ && static_cast<uint64_t>(n) * min_bytes > b_.size() - pos_) fail(fmt::format("count {} at byte {} exceeds the data", n, pos_ - 4));
    return ok_ ? n : 0;
  }
  std::string str() {
    const uint32_t n = count(1);
    if (!ok_) return {};
    std::string s(reinterpret_cast<const char*>(b_.data() + pos_), n);
    pos_ += n;
    if (find_invalid_utf8(s) != kValidUtf8) fail(fmt::format("string ending at byte {} is not valid UTF-8", pos_));
    return s;
  }
  // A counted array of trivially copyable T, copied in one go.
  template <typename T>
  void array(std::vector<T>& v) {
    v.resize(count(sizeof(T)));
    if (!ok_ || v.empty()) return;
    std::memcpy(v.data(), b_.data() + pos_, v.size() * sizeof(T));
    pos_ += v.size() * sizeof(T);
  }
  PatternSpec pattern() {
    PatternSpec p;
    p.text = str();
    p.is_regex = flag();
    return p;
  }
  size_t remaining() const { return b_.size() - pos_; }

 private:
  std::span<const uint8_t> b_;
  size_t pos_ = 0;
  bool ok_ = true;
  std::string what_;
};

void write_payload(const TokenizerSpec& s, Writer& w) {
  const BpeSpec& m = s.model;
  w.str(m.vocab_bytes);
  w.array(m.vocab_ends);
  w.array(m.vocab_ids);
  w.array(m.merges);
  w.array(m.vocab_table);
  w.array(m.merge_table);
  w.flag(m.has_unk), w.str(m.unk_token);
  w.flag(m.has_continuing_subword_prefix), w.str(m.continuing_subword_prefix);
  w.flag(m.has_end_of_word_suffix), w.str(m.end_of_word_suffix);
  w.flag(m.fuse_unk), w.flag(m.byte_fallback), w.flag(m.ignore_merges);

  w.put<uint32_t>(static_cast<uint32_t>(s.normalizers.size()));
  for (const NormalizerStep& n : s.normalizers) {
    w.put<uint8_t>(static_cast<uint8_t>(n.kind)), w.pattern(n.pattern), w.str(n.content);
    w.flag(n.strip_left), w.flag(n.strip_right);
  }
  w.put<uint32_t>(static_cast<uint32_t>(s.pre_tokenizers.size()));
  for (const PreTokenizerStep& p : s.pre_tokenizers) {
    w.put<uint8_t>(static_cast<uint8_t>(p.kind)), w.pattern(p.pattern), w.put<uint8_t>(static_cast<uint8_t>(p.behavior));
    w.flag(p.invert), w.flag(p.add_prefix_space), w.flag(p.use_regex), w.put<uint32_t>(p.replacement);
    w.put<uint8_t>(static_cast<uint8_t>(p.prepend_scheme)), w.flag(p.split), w.flag(p.individual_digits);
  }
  w.flag(s.has_decoder);
  w.put<uint32_t>(static_cast<uint32_t>(s.decoders.size()));
  for (const DecoderStep& d : s.decoders) {
    w.put<uint8_t>(static_cast<uint8_t>(d.kind)), w.pattern(d.pattern), w.str(d.content);
    w.put<uint32_t>(d.strip_char), w.put<uint32_t>(d.strip_start), w.put<uint32_t>(d.strip_stop);
    w.put<uint32_t>(d.replacement), w.put<uint8_t>(static_cast<uint8_t>(d.prepend_scheme));
  }
  w.put<uint32_t>(static_cast<uint32_t>(s.templates.size()));
  for (const TemplateStep& t : s.templates) {
    w.put<uint32_t>(static_cast<uint32_t>(t.single.size()));
    for (const TemplatePiece& p : t.single) {
      w.flag(p.is_sequence);
      w.put<uint32_t>(static_cast<uint32_t>(p.ids.size()));
      for (int32_t id : p.ids) w.put<int32_t>(id);
    }
  }
  w.put<uint32_t>(static_cast<uint32_t>(s.added_tokens.size()));
  for (const AddedTokenSpec& a : s.added_tokens) {
    w.put<int32_t>(a.id), w.str(a.content);
    w.flag(a.single_word), w.flag(a.lstrip), w.flag(a.rstrip), w.flag(a.normalized), w.flag(a.special);
  }
}

void read_payload(Reader& r, TokenizerSpec& s) {
  BpeSpec& m = s.model;
  m.vocab_bytes = r.str();
  r.array(m.vocab_ends);
  r.array(m.vocab_ids);
  r.array(m.merges);
  r.array(m.vocab_table);
  r.array(m.merge_table);
  m.has_unk = r.flag(), m.unk_token = r.str();
  m.has_continuing_subword_prefix = r.flag(), m.continuing_subword_prefix = r.str();
  m.has_end_of_word_suffix = r.flag(), m.end_of_word_suffix = r.str();
  m.fuse_unk = r.flag(), m.byte_fallback = r.flag(), m.ignore_merges = r.flag();

  s.normalizers.resize(r.count(12));
  for (NormalizerStep& n : s.normalizers) {
    n.kind = r.enumerated<NormalizerStep::Kind>(static_cast<uint8_t>(NormalizerStep::Kind::kByteLevel));
    n.pattern = r.pattern(), n.content = r.str();
    n.strip_left = r.flag(), n.strip_right = r.flag();
  }
  s.pre_tokenizers.resize(r.count(17));
  for (PreTokenizerStep& p : s.pre_tokenizers) {
    p.kind = r.enumerated<PreTokenizerStep::Kind>(static_cast<uint8_t>(PreTokenizerStep::Kind::kWhitespaceSplit));
    p.pattern = r.pattern();
    p.behavior = r.enumerated<SplitBehavior>(static_cast<uint8_t>(SplitBehavior::kContiguous));
    p.invert = r.flag(), p.add_prefix_space = r.flag(), p.use_regex = r.flag(), p.replacement = r.get<uint32_t>();
    p.prepend_scheme = r.enumerated<PrependScheme>(static_cast<uint8_t>(PrependScheme::kNever));
    p.split = r.flag(), p.individual_digits = r.flag();
  }
  s.has_decoder = r.flag();
  s.decoders.resize(r.count(27));
  for (DecoderStep& d : s.decoders) {
    d.kind = r.enumerated<DecoderStep::Kind>(static_cast<uint8_t>(DecoderStep::Kind::kMetaspace));
    d.pattern = r.pattern(), d.content = r.str();
    d.strip_char = r.get<uint32_t>(), d.strip_start = r.get<uint32_t>(), d.strip_stop = r.get<uint32_t>();
    d.replacement = r.get<uint32_t>();
    d.prepend_scheme = r.enumerated<PrependScheme>(static_cast<uint8_t>(PrependScheme::kNever));
  }
  s.templates.resize(r.count(4));
  for (TemplateStep& t : s.templates) {
    t.single.resize(r.count(5));
    for (TemplatePiece& p : t.single) {
      p.is_sequence = r.flag();
      p.ids.resize(r.count(4));
      for (int32_t& id : p.ids) id = r.get<int32_t>();
    }
  }
  s.added_tokens.resize(r.count(13));
  for (AddedTokenSpec& a : s.added_tokens) {
    a.id = r.get<int32_t>(), a.content = r.str();
    a.single_word = r.flag(), a.lstrip = r.flag(), a.rstrip = r.flag(), a.normalized = r.flag(), a.special = r.flag();
  }
  if (r.ok() && r.remaining() != 0) r.fail(fmt::format("{} unexpected bytes after the last field", r.remaining()));
}

}  // namespace

std::vector<uint8_t> spec_to_binary(const TokenizerSpec& spec) {
  Writer payload;
  write_payload(spec, payload);
  Writer out;
  out.bytes.insert(out.bytes.end(), std::begin(kMagic), std::end(kMagic));
  out.put<uint32_t>(kFormatVersion);
  out.put<uint32_t>(0);
  out.put<uint64_t>(payload.bytes.size());
  out.put<uint64_t>(XXH3_64bits(payload.bytes.data(), payload.bytes.size()));
  out.bytes.insert(out.bytes.end(), payload.bytes.begin(), payload.bytes.end());
  return std::move(out.bytes);
}

Result<TokenizerSpec> spec_from_binary(std::span<const uint8_t> blob) {
  if (blob.size() < kHeaderBytes || std::memcmp(blob.data(), kMagic, sizeof(kMagic)) != 0)
    return bad_input("tokenizer blob: not an offgraph tokenizer ({} bytes, bad magic)", blob.size());
  Reader header(blob.subspan(sizeof(kMagic), kHeaderBytes - sizeof(kMagic)));
  const auto version = header.get<uint32_t>();
  header.get<uint32_t>();
  const auto payload_bytes = header.get<uint64_t>();
  const auto checksum = header.get<uint64_t>();
  if (version != kFormatVersion)
    return unsupported("tokenizer blob: format version {} (this build reads version {})", version, kFormatVersion);
  if (payload_bytes != blob.size() - kHeaderBytes)
    return bad_input("tokenizer blob: header says {} payload bytes, {} present", payload_bytes, blob.size() - kHeaderBytes);
  const std::span<const uint8_t> payload = blob.subspan(kHeaderBytes);
  if (XXH3_64bits(payload.data(), payload.size()) != checksum) return bad_input("tokenizer blob: checksum mismatch (corrupt data)");
  Reader r(payload);
  TokenizerSpec spec;
  read_payload(r, spec);
  if (!r.ok()) return bad_input("tokenizer blob: {}", r.what());
  return spec;
}

}  // namespace og::tokenizer
