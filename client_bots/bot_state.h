// BotState: where a bot is in its life (bot.h describes the machine), with names for reports.
#pragma once

#include <cstdint>

namespace bots {

enum class BotState : uint8_t {
  kWaiting,        // before its ramp slot
  kChallenge,      // waiting for the thread's challenge
  kLobbyConnect,   // ENet connect to the lobby under way
  kLobbyJoin,      // JoinRequest sent, waiting for JoinAccept / JoinRefuse
  kWorkerConnect,  // ENet connect to the worker under way
  kWorkerHello,    // Hello sent, waiting for Welcome
  kPlaying,        // sending commands, receiving snapshots
  kBackoff,        // waiting to try again
  kDone,
};
inline constexpr int kNumBotStates = static_cast<int>(BotState::kDone) + 1;

// The JSON name of a state ("lobby_connect", ...).
const char* BotStateName(BotState s);

}  // namespace bots
