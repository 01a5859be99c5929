#include "server/protocol/enet_drain.h"

#include <cerrno>

namespace proto {

namespace {

// Errors of the socket itself, after which reading again cannot succeed.
bool SocketBroken(int err) {
  return err == EBADF || err == ENOTSOCK || err == EINVAL || err == EFAULT || err == ENOMEM;
}

}  // namespace

DrainResult DrainHost(ENetHost* host, const std::function<void(ENetEvent&)>& on_event,
                      uint32_t wait_ms, uint64_t max_datagrams) {
  DrainResult out;
  for (enet_uint32 timeout = wait_ms;; timeout = 0) {
    const enet_uint32 before = host->totalReceivedPackets;
    ENetEvent ev;
    errno = 0;
    const int r = enet_host_service(host, &ev, timeout);
    const enet_uint32 read = host->totalReceivedPackets - before;  // wraps correctly
    out.datagrams += read;
    if (r < 0) {
      // Usually one datagram too large for ENet's buffer, already consumed: read on.
      ++out.read_errors;
      if (SocketBroken(errno)) {
        out.error = true;
        return out;
      }
      ++out.datagrams;  // the failed one
      if (out.datagrams >= max_datagrams) {
        out.capped = true;
        return out;
      }
      continue;
    }
    if (r > 0) {
      const bool packet = ev.type == ENET_EVENT_TYPE_RECEIVE;
      ++out.events;
      on_event(ev);
      // The rest of what this call's read queued, without another enet_host_service: each
      // call walks every peer slot twice to send, even with nothing to send.
      while (enet_host_check_events(host, &ev) > 0) {
        ++out.events;
        on_event(ev);
      }
      // A packet comes out only after ENet's read found the socket empty or read a full batch
      // (a connect or disconnect can end the read early, so those say nothing); read == 0: the
      // packet was queued before this call, which has not read yet.
      if (packet && read > 0 && read < kEnetReadBatch) return out;
    } else if (read < kEnetReadBatch) {
      return out;  // no event and a short batch: the socket is empty
    }
    if (out.datagrams >= max_datagrams) {
      out.capped = true;
      return out;
    }
  }
}

}  // namespace proto
