#ifndef REDLOCK_REDLOCK_HPP
#define REDLOCK_REDLOCK_HPP

#include <redlock/blocking_client.hpp>
#include <redlock/client.hpp>
#include <redlock/config.hpp>
#include <redlock/error.hpp>
#include <redlock/export.hpp>
#include <redlock/fencing.hpp>
#include <redlock/lock.hpp>
#include <redlock/lock_keys.hpp>
#include <redlock/locked.hpp>
#include <redlock/metrics.hpp>
#include <redlock/node_address.hpp>
#include <redlock/scoped_lock.hpp>
#include <redlock/vote.hpp>
#include <redlock/watchdog.hpp>
#include <redlock/with_lock.hpp>

/// @file
/// Every public header of the library at once.

/// @namespace redlock
/// Distributed locks on N independent Redis masters (the Redlock algorithm): client for
/// asynchronous use, blocking_client for thread-per-request code, scoped_lock, watchdog and
/// with_lock for holding a lock while work runs.

#endif
