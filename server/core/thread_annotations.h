// Clang thread-safety annotations (as LevelDB's port/thread_annotations.h and Abseil's): with
// clang and -Wthread-safety the compiler checks that what a mutex guards is touched only with it
// held; other compilers see empty macros. Annotate with core::Mutex (mutex.h): libstdc++'s
// std::mutex carries no annotations.
#pragma once

#if defined(__clang__)
#define AS_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define AS_THREAD_ANNOTATION(x)
#endif

// On a type: it is a lock (a "capability" the analysis tracks).
#define CAPABILITY(name) AS_THREAD_ANNOTATION(capability(name))
// On an RAII type: constructing it acquires, destroying it releases.
#define SCOPED_CAPABILITY AS_THREAD_ANNOTATION(scoped_lockable)
// On a member: read or written only with `mu` held.
#define GUARDED_BY(mu) AS_THREAD_ANNOTATION(guarded_by(mu))
// On a pointer member: what it points to is read or written only with `mu` held.
#define PT_GUARDED_BY(mu) AS_THREAD_ANNOTATION(pt_guarded_by(mu))
// On a function: callers must hold the locks (exclusively).
#define REQUIRES(...) AS_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// On a function: callers must not hold the locks (it takes them itself).
#define EXCLUDES(...) AS_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// On a function: it acquires / releases the locks (or, with no argument, `this`).
#define ACQUIRE(...) AS_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) AS_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
// On a function: it acquires the lock if it returns `result`.
#define TRY_ACQUIRE(...) AS_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// On a function: it checks (aborting otherwise) that the lock is held.
#define ASSERT_CAPABILITY(x) AS_THREAD_ANNOTATION(assert_capability(x))
// On a function: it returns a reference to the lock `x`.
#define RETURN_CAPABILITY(x) AS_THREAD_ANNOTATION(lock_returned(x))
// On a function: the analysis does not look inside (say why beside it).
#define NO_THREAD_SAFETY_ANALYSIS AS_THREAD_ANNOTATION(no_thread_safety_analysis)
