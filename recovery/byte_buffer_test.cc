// ByteBuffer: heap and mapped buffers hold what is written, keep a prefix on Truncate, and move.
#include <catch2/catch.hpp>

#include <cstdint>
#include <utility>

#include "recovery/byte_buffer.h"

namespace recovery {

namespace {

char PatternAt(size_t i) { return static_cast<char>((i * 131 + i / 4096) & 0xff); }

void Fill(ByteBuffer* b) {
  for (size_t i = 0; i < b->size(); ++i) b->data()[i] = PatternAt(i);
}

bool Holds(const ByteBuffer& b, size_t n) {
  if (b.size() != n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (b.data()[i] != PatternAt(i)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("ByteBuffer holds every byte written, on the heap and mapped", "[bytes]") {
  constexpr size_t kMap = ByteBuffer::kMapBytes;
  for (size_t n : {size_t{1}, size_t{4096}, kMap - 1, kMap, 3 * kMap + 5}) {
    CAPTURE(n);
    ByteBuffer b;
    REQUIRE(b.Allocate(n, "test").ok());
    REQUIRE(b.size() == n);
    REQUIRE(b.view().size() == n);
    if (n >= kMap) {  // a mapping starts on a 2 MiB boundary, where huge pages can be had
      CHECK(reinterpret_cast<uintptr_t>(b.data()) % kMap == 0);
    }
    Fill(&b);
    CHECK(Holds(b, n));

    // Truncate keeps the prefix, however far it cuts (a mapping gives back whole pages past it).
    for (size_t keep : {n, n - n / 3, n / 2 + 1, size_t{1}}) {
      b.Truncate(keep);
      CHECK(Holds(b, keep));
    }
    b.Truncate(0);
    CHECK(b.size() == 0);
    CHECK(b.view().empty());

    // Allocate again gives the new size.
    REQUIRE(b.Allocate(n, "test").ok());
    Fill(&b);
    CHECK(Holds(b, n));
  }
}

// A scan reads segment after segment into one buffer: the memory it already has serves whenever
// it has room, and only a larger size takes new memory.
TEST_CASE("ByteBuffer reuses its own memory when it has room", "[bytes]") {
  constexpr size_t kMap = ByteBuffer::kMapBytes;
  for (size_t first : {size_t{5000}, 3 * kMap + 5}) {
    CAPTURE(first);
    ByteBuffer b;
    REQUIRE(b.Allocate(first, "test").ok());
    const char* memory = b.data();
    const size_t capacity = b.capacity();
    CHECK(capacity >= first);
    for (size_t n : {first / 2, size_t{0}, size_t{1}, first, capacity}) {
      CAPTURE(n);
      REQUIRE(b.Allocate(n, "test").ok());
      CHECK(b.size() == n);
      CHECK(b.data() == memory);
      CHECK(b.capacity() == capacity);
      Fill(&b);
      CHECK(Holds(b, n));
    }
    REQUIRE(b.Allocate(capacity + 1, "test").ok());  // past its room: new memory
    CHECK(b.capacity() > capacity);
    Fill(&b);
    CHECK(Holds(b, capacity + 1));
    b.Release();
    CHECK(b.capacity() == 0);
  }
}

TEST_CASE("ByteBuffer moves its bytes and leaves the source empty", "[bytes]") {
  for (size_t n : {size_t{100}, 2 * ByteBuffer::kMapBytes + 1}) {
    CAPTURE(n);
    ByteBuffer a;
    REQUIRE(a.Allocate(n, "test").ok());
    Fill(&a);
    ByteBuffer b(std::move(a));
    CHECK(a.size() == 0);  // NOLINT(bugprone-use-after-move): a moved-from buffer is empty
    CHECK(a.data() == nullptr);
    CHECK(Holds(b, n));

    ByteBuffer c;
    REQUIRE(c.Allocate(7, "test").ok());
    c = std::move(b);  // drops c's own bytes
    CHECK(b.size() == 0);  // NOLINT(bugprone-use-after-move)
    CHECK(Holds(c, n));
    c.Release();
    CHECK(c.size() == 0);
    CHECK(c.data() == nullptr);
  }
  ByteBuffer empty;
  REQUIRE(empty.Allocate(0, "test").ok());
  CHECK(empty.size() == 0);
}

}  // namespace recovery
