#include "queue/redis_client.h"

#include <poll.h>
#include <sys/time.h>

#include <hiredis/hiredis.h>

namespace inferscope::queue {
namespace {

timeval to_timeval(std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  return tv;
}

RedisReply copy_reply(const redisReply* reply) {
  RedisReply out;
  if (reply == nullptr) return out;
  switch (reply->type) {
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::kString;
      out.str.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kStatus;
      out.str.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = RedisReply::Type::kError;
      out.str.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = reply->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      out.elements.reserve(reply->elements);
      for (size_t i = 0; i < reply->elements; ++i) out.elements.push_back(copy_reply(reply->element[i]));
      break;
    default:
      break;
  }
  return out;
}

// append_argv queues one command in hiredis's output buffer in the binary-safe argv form.
int append_argv(redisContext* context, const RedisCommand& command) {
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  argv.reserve(command.size());
  lengths.reserve(command.size());
  for (const std::string& arg : command) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  return redisAppendCommandArgv(context, static_cast<int>(argv.size()), argv.data(), lengths.data());
}

}  // namespace

RedisClient::RedisClient(redisContext* context, std::string where) noexcept
    : context_(context), where_(std::move(where)) {}

RedisClient::RedisClient(RedisClient&& other) noexcept
    : context_(std::exchange(other.context_, nullptr)), where_(std::move(other.where_)) {}

RedisClient& RedisClient::operator=(RedisClient&& other) noexcept {
  if (this != &other) {
    if (context_ != nullptr) redisFree(context_);
    context_ = std::exchange(other.context_, nullptr);
    where_ = std::move(other.where_);
  }
  return *this;
}

RedisClient::~RedisClient() {
  if (context_ != nullptr) redisFree(context_);
}

Error RedisClient::failure(const std::string& what) const {
  const std::string cause = context_ != nullptr && context_->err != 0 ? context_->errstr : "connection closed";
  return make_error("cannot " + what + " redis at " + where_ + ": " + cause);
}

Result<RedisClient> RedisClient::connect(const RedisTarget& target, std::chrono::milliseconds timeout) {
  const std::string where = describe(target);
  redisContext* context = redisConnectWithTimeout(target.host.c_str(), target.port, to_timeval(timeout));
  if (context == nullptr) return make_error("cannot connect to redis at " + where + ": out of memory");
  RedisClient client(context, where);
  if (context->err != 0) return client.failure("connect to");
  if (redisSetTimeout(context, to_timeval(timeout)) != REDIS_OK) return client.failure("connect to");
  std::vector<RedisCommand> setup;
  if (!target.password.empty()) setup.push_back({"AUTH", target.password});
  if (target.db != 0) setup.push_back({"SELECT", std::to_string(target.db)});
  if (setup.empty()) return client;
  auto replies = client.pipeline(setup);
  if (!replies) return replies.error();
  for (std::size_t i = 0; i < replies->size(); ++i) {
    const RedisReply& reply = (*replies)[i];
    if (!reply.is_error()) continue;
    const bool auth = setup[i][0] == "AUTH";
    return make_error(std::string(auth ? "cannot authenticate to redis at " : "cannot select the database of redis at ") +
                      where + ": " + reply.str);
  }
  return client;
}

Result<void> RedisClient::flush() {
  int done = 0;
  while (done == 0) {
    if (redisBufferWrite(context_, &done) != REDIS_OK) return failure("write to");
  }
  return {};
}

Result<std::vector<RedisReply>> RedisClient::pipeline(const std::vector<RedisCommand>& commands) {
  if (context_ == nullptr || context_->err != 0) return failure("use the connection to");
  for (const RedisCommand& command : commands) {
    if (append_argv(context_, command) != REDIS_OK) return failure("queue a command for");
  }
  std::vector<RedisReply> replies;
  replies.reserve(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(context_, &raw) != REDIS_OK) return failure("read a reply from");
    auto* reply = static_cast<redisReply*>(raw);
    replies.push_back(copy_reply(reply));
    freeReplyObject(reply);
  }
  return replies;
}

Result<void> RedisClient::send(const RedisCommand& command) {
  if (context_ == nullptr || context_->err != 0) return failure("use the connection to");
  if (append_argv(context_, command) != REDIS_OK) return failure("queue a command for");
  return flush();
}

Result<std::optional<RedisReply>> RedisClient::next_push(std::chrono::milliseconds wait) {
  if (context_ == nullptr || context_->err != 0) return failure("use the connection to");
  void* raw = nullptr;
  if (redisGetReplyFromReader(context_, &raw) != REDIS_OK) return failure("parse a message from");
  if (raw == nullptr) {
    // Nothing buffered: wait on the socket ourselves, since a hiredis read timeout would poison
    // the context and an idle subscription is normal.
    pollfd fd{context_->fd, POLLIN, 0};
    const int ready = ::poll(&fd, 1, static_cast<int>(wait.count()));
    if (ready < 0) return failure("wait for");
    if (ready == 0) return std::optional<RedisReply>();
    if (redisBufferRead(context_) != REDIS_OK) return failure("read from");
    if (redisGetReplyFromReader(context_, &raw) != REDIS_OK) return failure("parse a message from");
    if (raw == nullptr) return std::optional<RedisReply>();
  }
  auto* reply = static_cast<redisReply*>(raw);
  RedisReply copy = copy_reply(reply);
  freeReplyObject(reply);
  return std::optional<RedisReply>(std::move(copy));
}

}  // namespace inferscope::queue
