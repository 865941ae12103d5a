#include "federated/wire/error_feedback.h"

#include <algorithm>

namespace xffl::federated::wire {

namespace {

bool shares_an_address(const std::vector<uintptr_t> &a, const std::vector<uintptr_t> &b) {
  for (size_t i = 0; i < a.size(); i += 2)
    for (size_t j = 0; j < b.size(); j += 2)
      if (a[i] == b[j]) return true;
  return false;
}

}  // namespace

void ErrorFeedback::begin(const void *const *bufs, const size_t *counts, size_t n, xffl_wire_format_t format) {
  if (format != format_) clear();
  forget_saved();
  format_ = format;
  Key key;
  for (size_t i = 0; i < n; ++i) {
    key.push_back(reinterpret_cast<uintptr_t>(bufs[i]));
    key.push_back(counts[i]);
  }
  if (residuals_.find(key) == residuals_.end()) {
    for (auto it = residuals_.begin(); it != residuals_.end();)  // a buffer of a stored layout changed
      it = shares_an_address(it->first, key) ? residuals_.erase(it) : std::next(it);
  }
  current_ = &residuals_[key];
  current_key_ = std::move(key);
  next_hop_ = 0;
}

std::vector<float> &ErrorFeedback::next(size_t count) {
  if (!current_) {  // a hop outside begin(): a residual of its own, for this call only
    residuals_[Key{}].clear();
    current_ = &residuals_[Key{}];
    current_key_.clear();
  }
  if (next_hop_ == current_->size()) current_->emplace_back();
  std::vector<float> &residual = (*current_)[next_hop_++];
  if (residual.size() != count) residual.assign(count, 0.0f);
  return residual;
}

void ErrorFeedback::save() {
  saved_ = current_ ? *current_ : std::vector<std::vector<float>>{};
  has_saved_ = true;
}

void ErrorFeedback::restore() {
  if (current_ && has_saved_) *current_ = saved_;
  next_hop_ = 0;
}

void ErrorFeedback::forget_saved() {
  std::vector<std::vector<float>>().swap(saved_);  // gives the memory back
  has_saved_ = false;
}

void ErrorFeedback::set_aside() {
  if (!current_) return;
  aside_ = *current_;
  aside_key_ = current_key_;
  has_aside_ = true;
}

void ErrorFeedback::settle(Settlement outcome) {
  if (!has_aside_) return;
  auto found = residuals_.find(aside_key_);
  if (found != residuals_.end()) {  // gone when a later call's layout replaced it
    if (outcome == Settlement::Counted) {
      found->second = aside_;
    } else if (outcome == Settlement::Unknown) {
      for (std::vector<float> &residual : found->second) std::fill(residual.begin(), residual.end(), 0.0f);
    }
    if (&found->second == current_ && has_saved_) saved_ = found->second;
  }
  std::vector<std::vector<float>>().swap(aside_);
  aside_key_.clear();
  has_aside_ = false;
}

void ErrorFeedback::clear() {
  std::vector<std::vector<float>>().swap(aside_);
  aside_key_.clear();
  has_aside_ = false;
  forget_saved();
  residuals_.clear();
  current_ = nullptr;
  next_hop_ = 0;
}

size_t ErrorFeedback::bytes() const {
  size_t total = 0;
  for (const auto &entry : residuals_)
    for (const std::vector<float> &residual : entry.second) total += residual.size() * sizeof(float);
  for (const std::vector<float> &residual : aside_) total += residual.size() * sizeof(float);
  return total;
}

}  // namespace xffl::federated::wire
