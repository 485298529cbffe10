// SPDX-License-Identifier: Apache-2.0
#include "util/sha256_worker.hpp"

#include "util/thread_cpu.hpp"
#include "util/timed_wait.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <stdexcept>

namespace cudnnctl::util {

Sha256Worker::Sha256Worker(size_t chunks, size_t chunk_size) : m_chunk_size(chunk_size) {
  for (size_t i = 0; i < std::max<size_t>(chunks, 1); ++i) {
    m_chunks.push_back(std::make_unique<char[]>(chunk_size));
    m_free.push_back(static_cast<int>(i));
  }
  m_thread = std::thread([this] { run(); });
}

Sha256Worker::~Sha256Worker() {
  note_wait("the sha256 worker", m_waited_s);
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_changed.notify_all();
  m_thread.join();
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
      m_queue.emplace_back(m_fill, m_fill_length);
    } else {
      m_free.push_back(m_fill);
    }
  }
  m_fill = -1;
  m_fill_length = 0;
  m_changed.notify_all();
}

void Sha256Worker::wait_idle(std::unique_lock<std::mutex>& lock) {
  m_changed.wait(lock, [&] { return m_queue.empty() && !m_busy; });
}

std::string Sha256Worker::hex_final() {
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

void Sha256Worker::reset() {
  flush();
  std::unique_lock lock(m_mutex);
  for (const auto& [chunk, length] : m_queue) {
    m_free.push_back(chunk);
  }
  m_queue.clear();
  wait_idle(lock);
  m_failed = false;
  m_sha = Sha256();
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
    const auto [chunk, length] = m_queue.front();
    m_queue.pop_front();
    m_busy = true;
    lock.unlock();
    try {
      m_sha.update(m_chunks[static_cast<size_t>(chunk)].get(), length);
    } catch (const std::exception&) {
      m_failed = true; // hex_final() throws, as Sha256::update would have
    }
    lock.lock();
    m_busy = false;
    m_free.push_back(chunk);
    m_changed.notify_all();
  }
}

} // namespace cudnnctl::util
