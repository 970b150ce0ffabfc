#pragma once
#include <string>

namespace mhaq {

// Pair fits kept beyond the process (recover --checkpoint): a fit is a pure
// function of its key (the pair, the head count and its kind, the field and
// the pair's samples, as exact bytes), so a store may serve a fit written by
// an earlier, killed run of the same options. put() is called from any of the
// learner's threads.
class FitStore {
 public:
  virtual ~FitStore() = default;
  // the image stored under key, or null
  virtual const std::string* find_fit(const std::string& key) const = 0;
  virtual void put_fit(const std::string& key, const std::string& image) = 0;
};

}  // namespace mhaq
