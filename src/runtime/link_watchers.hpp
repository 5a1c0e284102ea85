#ifndef REDLOCK_SRC_RUNTIME_LINK_WATCHERS_HPP
#define REDLOCK_SRC_RUNTIME_LINK_WATCHERS_HPP

#include <vector>

namespace redlock::detail {

/// An operation waiting for connections (an acquire before an attempt).
class link_watcher {
public:
    /// Some link's readiness may have changed.
    virtual void on_links_changed() = 0;

protected:
    ~link_watcher() = default;
};

/// The operations of one client waiting for its links, told whenever one of them may have
/// become ready or stopped connecting. Used on the client's strand only.
class link_watchers {
public:
    void watch(link_watcher* w);
    void unwatch(link_watcher* w);
    /// Tells every watcher registered now; one may unwatch itself, or others, meanwhile.
    void notify();

private:
    std::vector<link_watcher*> watchers_;
};

} // namespace redlock::detail

#endif
