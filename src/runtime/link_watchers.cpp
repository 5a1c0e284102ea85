#include "runtime/link_watchers.hpp"

#include <algorithm>

namespace redlock::detail {

void link_watchers::watch(link_watcher* w) {
    watchers_.push_back(w);
}

void link_watchers::unwatch(link_watcher* w) {
    watchers_.erase(std::remove(watchers_.begin(), watchers_.end(), w), watchers_.end());
}

void link_watchers::notify() {
    // A watcher that starts its attempt unwatches itself; one that completes may be the
    // last owner of others. Only those still registered when their turn comes are told.
    const auto snapshot = watchers_;
    for (auto* w : snapshot) {
        if (std::find(watchers_.begin(), watchers_.end(), w) != watchers_.end()) {
            w->on_links_changed();
        }
    }
}

} // namespace redlock::detail
