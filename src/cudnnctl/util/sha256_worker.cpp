// SPDX-License-Identifier: Apache-2.0
#include "util/sha256_worker.hpp"

#include "util/cores.hpp"
#include "util/thread_cpu.hpp"
#include "util/timed_wait.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>

namespace cudnnctl::util {

size_t default_chunk_hash_threads() {
  return usable_cores() <= 6 ? 1 : 2;
}

Sha256Worker::Sha256Worker(size_t chunks, size_t chunk_size) : m_chunk_size(chunk_size) {
  start(chunks, 1);
}

Sha256Worker::Sha256Worker(Chunked mode, size_t chunks, size_t chunk_size)
    : m_chunk_size(chunk_size), m_chunked(true) {
  start(chunks, mode.threads);
}

Sha256Worker Sha256Worker::for_stream(bool chunked) {
  if (!chunked) {
    return Sha256Worker();
  }
  const size_t threads = default_chunk_hash_threads();
  return Sha256Worker(Chunked{threads}, threads + 3, k_sha256_chunk);
}

void Sha256Worker::start(size_t chunks, size_t threads) {
  for (size_t i = 0; i < std::max<size_t>(chunks, 1); ++i) {
    m_chunks.push_back(std::make_unique<char[]>(m_chunk_size));
    m_free.push_back(static_cast<int>(i));
  }
  try {
    for (size_t i = 0; i < std::max<size_t>(threads, 1); ++i) {
      m_threads.emplace_back([this] { run(); });
    }
  } catch (...) {
    {
      std::lock_guard lock(m_mutex);
      m_stop = true;
    }
    m_changed.notify_all();
    for (auto& t : m_threads) {
      t.join();
    }
    throw;
  }
}

Sha256Worker::~Sha256Worker() {
  note_wait("the sha256 worker", m_waited_s);
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_changed.notify_all();
  for (auto& t : m_threads) {
    t.join();
  }
}

void Sha256Worker::update(const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    if (m_fill < 0) {
      std::unique_lock lock(m_mutex);
      timed_wait(
          m_changed, lock, [&] { return !m_free.empty(); }, m_waited_s);
      m_fill = m_free.back();
      m_free.pop_back();
      m_fill_length = 0;
    }
    const size_t n = std::min(size, m_chunk_size - m_fill_length);
    std::memcpy(m_chunks[static_cast<size_t>(m_fill)].get() + m_fill_length, p, n);
    m_fill_length += n;
    p += n;
    size -= n;
    if (m_fill_length == m_chunk_size) {
      flush();
    }
  }
}

void Sha256Worker::flush() {
  if (m_fill < 0) {
    return;
  }
  {
    std::lock_guard lock(m_mutex);
    if (m_fill_length > 0) {
      m_queue.push_back(Piece{m_fill, m_fill_length, m_next_seq++});
    } else {
      m_free.push_back(m_fill);
    }
  }
  m_fill = -1;
  m_fill_length = 0;
  m_changed.notify_all();
}

void Sha256Worker::wait_idle(std::unique_lock<std::mutex>& lock) {
  m_changed.wait(lock, [&] { return m_queue.empty() && m_busy == 0; });
}

std::string Sha256Worker::hex_final() {
  if (m_chunked) {
    throw std::logic_error("hex_final() of a chunked Sha256Worker");
  }
  flush();
  std::unique_lock lock(m_mutex);
  wait_idle(lock);
  if (std::exchange(m_failed, false)) {
    m_sha = Sha256();
    throw std::runtime_error("OpenSSL: EVP_DigestUpdate failed");
  }
  std::string out = m_sha.hex_final();
  m_sha = Sha256();
  return out;
}

std::vector<std::string> Sha256Worker::chunk_digests() {
  if (!m_chunked) {
    throw std::logic_error("chunk_digests() of a Sha256Worker that is not chunked");
  }
  flush();
  std::unique_lock lock(m_mutex);
  wait_idle(lock);
  m_next_seq = 0;
  std::vector<std::string> out = std::exchange(m_digests, {});
  if (std::exchange(m_failed, false)) {
    throw std::runtime_error("OpenSSL: EVP_DigestUpdate failed");
  }
  return out;
}

void Sha256Worker::reset() {
  flush();
  std::unique_lock lock(m_mutex);
  for (const auto& piece : m_queue) {
    m_free.push_back(piece.chunk);
  }
  m_queue.clear();
  wait_idle(lock);
  m_failed = false;
  m_sha = Sha256();
  m_digests.clear();
  m_next_seq = 0;
  m_changed.notify_all();
}

void Sha256Worker::run() {
  std::unique_lock lock(m_mutex);
  for (;;) {
    m_changed.wait(lock, [&] { return m_stop || !m_queue.empty(); });
    if (m_stop) {
      note_thread_cpu("sha256 worker");
      return;
    }
    const Piece piece = m_queue.front();
    m_queue.pop_front();
    ++m_busy;
    lock.unlock();
    const char* bytes = m_chunks[static_cast<size_t>(piece.chunk)].get();
    std::string digest;
    bool failed = false;
    try {
      if (m_chunked) {
        Sha256 sha;
        sha.update(bytes, piece.length);
        digest = sha.hex_final();
      } else {
        m_sha.update(bytes, piece.length); // one thread: the pieces in order
      }
    } catch (const std::exception&) {
      failed = true; // hex_final() or chunk_digests() throws, as Sha256::update would have
    }
    lock.lock();
    m_failed = m_failed || failed;
    if (m_chunked) {
      if (m_digests.size() <= piece.seq) {
        m_digests.resize(piece.seq + 1);
      }
      m_digests[piece.seq] = std::move(digest);
    }
    --m_busy;
    m_free.push_back(piece.chunk);
    m_changed.notify_all();
  }
}

} // namespace cudnnctl::util
