#ifndef REDLOCK_EXPORT_HPP
#define REDLOCK_EXPORT_HPP

/// @file
/// REDLOCK_API marks the classes and functions of the public API. The library is built with
/// hidden symbols (`-fvisibility=hidden -fvisibility-inlines-hidden`), so a shared
/// `libredlock.so` exports these and nothing else. With GCC and Clang on ELF the same
/// attribute serves for building and for using the library, static or shared; other
/// compilers get an empty macro (define REDLOCK_API before including a redlock header to
/// supply your own).

#ifndef REDLOCK_API
#if defined(__GNUC__) || defined(__clang__)
#define REDLOCK_API __attribute__((visibility("default")))
#else
#define REDLOCK_API
#endif
#endif

#endif
