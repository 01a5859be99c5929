// Validate/Encode/Decode for the join, input, chat and event messages. Each message has a Write
// and a Read for its body (after the type byte); the generic EncodeAs/DecodeAs add the type
// byte, the size limit, truncation and trailing-byte checks, and run Validate.
#include "server/protocol/messages.h"

#include <cmath>
#include <string>

#include "server/core/check.h"
#include "server/protocol/byte_io.h"

namespace proto {
namespace {

using core::Status;

Status Bad(std::string_view what, const std::string& why) {
  return Status::InvalidArgument(std::string(what) + ": " + why);
}

Status CheckText(std::string_view what, std::string_view text, size_t min_chars, size_t max_chars) {
  if (text.size() < min_chars || text.size() > max_chars) {
    return Bad(what, "length " + std::to_string(text.size()) + " outside " +
                         std::to_string(min_chars) + ".." + std::to_string(max_chars));
  }
  if (!IsPrintableAscii(text)) return Bad(what, "non-printable or non-ASCII character");
  return Status::OK();
}

template <class E>
Status CheckEnum(std::string_view what, E value, uint8_t min_value, uint8_t max_value) {
  uint8_t v = static_cast<uint8_t>(value);
  if (v < min_value || v > max_value) {
    return Bad(what, "value " + std::to_string(v) + " outside " + std::to_string(min_value) + ".." +
                         std::to_string(max_value));
  }
  return Status::OK();
}

Status CheckAngle(std::string_view what, float deg, float max_abs) {
  if (!std::isfinite(deg)) return Bad(what, "not a finite number");
  if (std::fabs(deg) > max_abs) return Bad(what, std::to_string(deg) + " out of range");
  return Status::OK();
}

Status CheckMove(std::string_view what, int16_t move) {
  if (move < -kMaxMove || move > kMaxMove) {
    return Bad(what, std::to_string(move) + " outside -400..400");
  }
  return Status::OK();
}

#define AS_RETURN_IF_ERROR(expr) \
  do {                           \
    Status _s = (expr);          \
    if (!_s.ok()) return _s;     \
  } while (0)

// --- bodies ----------------------------------------------------------------------------------

void Write(ByteWriter& w, const JoinRequest& m) {
  w.U16(m.protocol_version);
  w.U32(m.challenge);
  w.String(m.name);
  w.U64(m.secret_token);
}
Status Read(ByteReader& r, JoinRequest* m) {
  m->protocol_version = r.U16();
  m->challenge = r.U32();
  m->name = r.String();
  m->secret_token = r.U64();
  return Status::OK();
}

void Write(ByteWriter& w, const JoinAccept& m) {
  w.U16(m.worker_port);
  w.U16(m.player_id);
  w.U64(m.session_ticket);
  w.U32(m.last_applied_sequence);
  w.U16(m.tick_rate_hz);
  w.U32(m.server_tick);
  w.U64(m.server_time_ms);
}
Status Read(ByteReader& r, JoinAccept* m) {
  m->worker_port = r.U16();
  m->player_id = r.U16();
  m->session_ticket = r.U64();
  m->last_applied_sequence = r.U32();
  m->tick_rate_hz = r.U16();
  m->server_tick = r.U32();
  m->server_time_ms = r.U64();
  return Status::OK();
}

void Write(ByteWriter& w, const Refusal& m) {
  w.U8(static_cast<uint8_t>(m.reason));
  w.String(m.text);
}
Status Read(ByteReader& r, Refusal* m) {
  m->reason = static_cast<RefuseReason>(r.U8());
  m->text = r.String();
  return Status::OK();
}

void Write(ByteWriter& w, const Hello& m) {
  w.U64(m.session_ticket);
  w.U16(m.player_id);
}
Status Read(ByteReader& r, Hello* m) {
  m->session_ticket = r.U64();
  m->player_id = r.U16();
  return Status::OK();
}

void Write(ByteWriter& w, const Welcome& m) {
  w.U16(m.player_id);
  w.U32(m.server_tick);
  w.U32(m.last_applied_sequence);
}
Status Read(ByteReader& r, Welcome* m) {
  m->player_id = r.U16();
  m->server_tick = r.U32();
  m->last_applied_sequence = r.U32();
  return Status::OK();
}

void WriteCmd(ByteWriter& w, const UserCmd& c) {
  w.U32(c.sequence);
  w.U8(c.duration_ms);
  w.F32(c.view_angles.x);
  w.F32(c.view_angles.y);
  w.F32(c.view_angles.z);
  w.I16(c.forward_move);
  w.I16(c.side_move);
  w.I16(c.up_move);
  w.U8(c.buttons);
  w.U8(c.impulse);
}
void ReadCmd(ByteReader& r, UserCmd* c) {
  c->sequence = r.U32();
  c->duration_ms = r.U8();
  c->view_angles.x = r.F32();
  c->view_angles.y = r.F32();
  c->view_angles.z = r.F32();
  c->forward_move = r.I16();
  c->side_move = r.I16();
  c->up_move = r.I16();
  c->buttons = r.U8();
  c->impulse = r.U8();
}

void Write(ByteWriter& w, const CommandPacket& m) {
  w.U32(m.ack_snapshot_id);
  w.U8(m.count);
  for (size_t i = 0; i < m.count; ++i) WriteCmd(w, m.cmds[i]);
}
Status Read(ByteReader& r, CommandPacket* m) {
  m->ack_snapshot_id = r.U32();
  m->count = r.U8();
  if (r.ok() && (m->count < 1 || m->count > kMaxCommandsPerPacket)) {
    return Bad("CommandPacket.count", std::to_string(m->count) + " outside 1..4");
  }
  for (size_t i = 0; i < m->count; ++i) ReadCmd(r, &m->cmds[i]);
  for (size_t i = m->count; i < kMaxCommandsPerPacket; ++i) m->cmds[i] = UserCmd{};
  return Status::OK();
}

void Write(ByteWriter& w, const ClientChat& m) { w.String(m.text); }
Status Read(ByteReader& r, ClientChat* m) {
  m->text = r.String();
  return Status::OK();
}

void Write(ByteWriter& w, const ChatEvent& m) {
  w.U16(m.from_id);
  w.String(m.from_name);
  w.String(m.text);
}
Status Read(ByteReader& r, ChatEvent* m) {
  m->from_id = r.U16();
  m->from_name = r.String();
  m->text = r.String();
  return Status::OK();
}

void Write(ByteWriter& w, const Kick& m) {
  w.U8(static_cast<uint8_t>(m.reason));
  w.String(m.text);
}
Status Read(ByteReader& r, Kick* m) {
  m->reason = static_cast<KickReason>(r.U8());
  m->text = r.String();
  return Status::OK();
}

// --- framing ---------------------------------------------------------------------------------

template <class M, class Body = M>
Status EncodeAs(const M& m, MessageType type, std::vector<uint8_t>* out) {
  AS_RETURN_IF_ERROR(Validate(m));
  ByteWriter w(std::move(*out));  // the caller's buffer: no allocation once it has grown
  w.Reserve(64);
  w.U8(static_cast<uint8_t>(type));
  Write(w, static_cast<const Body&>(m));
  AS_CHECK(w.size() <= kMaxPacketBytes, "a valid message never exceeds kMaxPacketBytes");
  *out = w.Release();
  return Status::OK();
}

template <class M, class Body = M>
Status DecodeAs(std::span<const uint8_t> packet, MessageType type, std::string_view name, M* m) {
  const std::string what(name);
  if (packet.size() > kMaxPacketBytes) {
    return Status::Corruption(what + ": packet of " + std::to_string(packet.size()) +
                              " bytes exceeds " + std::to_string(kMaxPacketBytes));
  }
  ByteReader r(packet);
  uint8_t t = r.U8();
  if (!r.ok()) return Status::Corruption(what + ": empty packet");
  if (t != static_cast<uint8_t>(type)) {
    return Status::Corruption(what + ": wrong type byte " + std::to_string(t));
  }
  AS_RETURN_IF_ERROR(Read(r, static_cast<Body*>(m)));
  if (!r.ok()) return Status::Corruption(what + ": truncated");
  if (!r.AtEnd()) {
    return Status::Corruption(what + ": " + std::to_string(r.remaining()) + " trailing bytes");
  }
  return Validate(*m);
}

Status ValidateRefusal(std::string_view reason_field, std::string_view text_field,
                       const Refusal& m) {
  AS_RETURN_IF_ERROR(CheckEnum(reason_field, m.reason, 1, kMaxRefuseReason));
  return CheckText(text_field, m.text, 0, kMaxReasonChars);
}

Status CheckPlayerId(std::string_view what, uint16_t id) {
  if (id == kNoPlayer) return Bad(what, "is kNoPlayer");
  return Status::OK();
}

}  // namespace

// --- public ----------------------------------------------------------------------------------

bool operator==(const CommandPacket& a, const CommandPacket& b) {
  if (a.ack_snapshot_id != b.ack_snapshot_id || a.count != b.count) return false;
  for (size_t i = 0; i < a.count && i < kMaxCommandsPerPacket; ++i) {
    if (!(a.cmds[i] == b.cmds[i])) return false;
  }
  return true;
}

std::optional<MessageType> PeekType(std::span<const uint8_t> packet) {
  if (packet.empty()) return std::nullopt;
  uint8_t t = packet[0];
  if ((t >= 0x01 && t <= 0x04) || (t >= 0x81 && t <= 0x89)) return static_cast<MessageType>(t);
  return std::nullopt;
}

bool IsPrintableAscii(std::string_view text) {
  for (char c : text) {
    if (c < 0x20 || c > 0x7E) return false;
  }
  return true;
}

Status ValidateName(std::string_view name) {
  AS_RETURN_IF_ERROR(CheckText("name", name, 1, kMaxNameChars));
  if (name.front() == ' ') return Bad("name", "starts with a space");
  if (name.find_first_of("\"\\") != std::string_view::npos) {
    return Bad("name", "contains '\"' or '\\'");
  }
  return Status::OK();
}

Status ValidateUserCmd(const UserCmd& c) {
  // Field names are literals so that a valid command costs no allocation.
  if (c.sequence == 0) return Bad("UserCmd.sequence", "0 is reserved");
  if (c.duration_ms < kMinCommandMs || c.duration_ms > kMaxCommandMs) {
    return Bad("UserCmd.duration_ms", std::to_string(c.duration_ms) + " outside 1..250");
  }
  AS_RETURN_IF_ERROR(CheckAngle("UserCmd.pitch", c.view_angles.x, kMaxPitchDeg));
  AS_RETURN_IF_ERROR(CheckAngle("UserCmd.yaw", c.view_angles.y, kMaxYawDeg));
  AS_RETURN_IF_ERROR(CheckAngle("UserCmd.roll", c.view_angles.z, kMaxRollDeg));
  AS_RETURN_IF_ERROR(CheckMove("UserCmd.forward_move", c.forward_move));
  AS_RETURN_IF_ERROR(CheckMove("UserCmd.side_move", c.side_move));
  AS_RETURN_IF_ERROR(CheckMove("UserCmd.up_move", c.up_move));
  if (c.buttons & ~kValidButtons) return Bad("UserCmd.buttons", "unknown bits set");
  if (c.impulse > kMaxImpulse) {
    return Bad("UserCmd.impulse", std::to_string(c.impulse) + " > 10");
  }
  return Status::OK();
}

Status Validate(const JoinRequest& m) {
  // Only the framing rule: the lobby answers a wrong version, a bad name (ValidateName), a bad
  // challenge or a wrong token with a JoinRefuse naming the reason, so they must decode.
  if (m.name.size() > 255) return Bad("JoinRequest.name", "longer than 255 bytes");
  return Status::OK();
}

Status Validate(const JoinAccept& m) {
  if (m.worker_port == 0) return Bad("JoinAccept.worker_port", "is 0");
  AS_RETURN_IF_ERROR(CheckPlayerId("JoinAccept.player_id", m.player_id));
  if (m.session_ticket == 0) return Bad("JoinAccept.session_ticket", "is 0");
  if (m.tick_rate_hz < 1 || m.tick_rate_hz > 1000) {
    return Bad("JoinAccept.tick_rate_hz", std::to_string(m.tick_rate_hz) + " outside 1..1000");
  }
  return Status::OK();
}

Status Validate(const JoinRefuse& m) {
  return ValidateRefusal("JoinRefuse.reason", "JoinRefuse.text", m);
}
Status Validate(const Refuse& m) { return ValidateRefusal("Refuse.reason", "Refuse.text", m); }

Status Validate(const Hello& m) {
  if (m.session_ticket == 0) return Bad("Hello.session_ticket", "is 0");
  return CheckPlayerId("Hello.player_id", m.player_id);
}

Status Validate(const Welcome& m) { return CheckPlayerId("Welcome.player_id", m.player_id); }

Status Validate(const CommandPacket& m) {
  if (m.count < 1 || m.count > kMaxCommandsPerPacket) {
    return Bad("CommandPacket.count", std::to_string(m.count) + " outside 1..4");
  }
  for (size_t i = 0; i < m.count; ++i) {
    if (Status s = ValidateUserCmd(m.cmds[i]); !s.ok()) {
      return Status::InvalidArgument("CommandPacket.cmds[" + std::to_string(i) +
                                     "]: " + s.message());
    }
  }
  const uint32_t newest = m.cmds[0].sequence;
  if (newest < m.count) return Bad("CommandPacket.cmds", "sequences would reach 0");
  for (size_t i = 1; i < m.count; ++i) {
    if (m.cmds[i].sequence != newest - i) {
      return Bad("CommandPacket.cmds", "sequences are not consecutive, newest first");
    }
  }
  return Status::OK();
}

Status Validate(const ClientChat& m) {
  return CheckText("ClientChat.text", m.text, 1, kMaxChatChars);
}

Status Validate(const ChatEvent& m) {
  AS_RETURN_IF_ERROR(CheckText("ChatEvent.from_name", m.from_name, 0, kMaxNameChars));
  return CheckText("ChatEvent.text", m.text, 1, kMaxChatChars);
}

Status Validate(const Kick& m) {
  AS_RETURN_IF_ERROR(CheckEnum("Kick.reason", m.reason, 1, kMaxKickReason));
  return CheckText("Kick.text", m.text, 0, kMaxReasonChars);
}

#define AS_PROTO_CODEC(M, BODY, NAME)                                 \
  Status Encode(const M& m, std::vector<uint8_t>* out) {              \
    return EncodeAs<M, BODY>(m, MessageType::k##NAME, out);           \
  }                                                                   \
  Status Decode(std::span<const uint8_t> packet, M* m) {              \
    return DecodeAs<M, BODY>(packet, MessageType::k##NAME, #NAME, m); \
  }

AS_PROTO_CODEC(JoinRequest, JoinRequest, JoinRequest)
AS_PROTO_CODEC(JoinAccept, JoinAccept, JoinAccept)
AS_PROTO_CODEC(JoinRefuse, Refusal, JoinRefuse)
AS_PROTO_CODEC(Hello, Hello, Hello)
AS_PROTO_CODEC(Welcome, Welcome, Welcome)
AS_PROTO_CODEC(Refuse, Refusal, Refuse)
AS_PROTO_CODEC(CommandPacket, CommandPacket, CommandPacket)
AS_PROTO_CODEC(ClientChat, ClientChat, ClientChat)
AS_PROTO_CODEC(ChatEvent, ChatEvent, ChatEvent)
AS_PROTO_CODEC(Kick, Kick, Kick)
#undef AS_PROTO_CODEC

}  // namespace proto
