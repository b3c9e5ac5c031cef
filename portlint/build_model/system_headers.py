"""The headers of the C and C++ standard libraries and of POSIX, by the name an `#include`
gives them.

An `#include <endian.h>` is the system's header, even where the project happens to hold a
file of that name deeper in its tree (a library that mirrors the standard headers:
`cuda/std/__bit/endian.h`, `cuda/std/memory`). The macro walk finds a project header by its
name alone when no include directory says where it is; these names never resolve that way.
"""

from __future__ import annotations

# C17 (and C23's additions).
_C = """assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp signal
stdalign stdarg stdatomic stdbit stdbool stdckdint stddef stdint stdio stdlib stdnoreturn string
tgmath threads time uchar wchar wctype"""

# POSIX (the headers without a folder) and the common glibc ones.
# (Not those whose names a project's own header often has: `trace.h`, `link.h`, `search.h`.)
_POSIX = """aio alloca byteswap cpio dirent dlfcn endian execinfo fcntl fmtmsg fnmatch ftw getopt
glob grp iconv langinfo libgen malloc monetary mqueue ndbm netdb nl_types poll pthread pwd regex
sched semaphore strings stropts syslog termios ucontext ulimit unistd utime utmpx wordexp"""

# C++ through C++23, without extension.
_CXX = """algorithm any array atomic barrier bit bitset cassert ccomplex cctype cerrno cfenv cfloat
charconv chrono cinttypes ciso646 climits clocale cmath codecvt compare complex concepts
condition_variable coroutine csetjmp csignal cstdalign cstdarg cstdbool cstddef cstdint cstdio
cstdlib cstring ctgmath ctime cuchar cwchar cwctype deque exception execution expected
filesystem flat_map flat_set format forward_list fstream functional future generator
initializer_list iomanip ios iosfwd iostream istream iterator latch limits list locale map
mdspan memory memory_resource mutex new numbers numeric optional ostream print queue random
ranges ratio regex scoped_allocator semaphore set shared_mutex source_location span spanstream
sstream stack stacktrace stdexcept stdfloat stop_token streambuf string string_view strstream
syncstream system_error thread tuple type_traits typeindex typeinfo unordered_map unordered_set
utility valarray variant vector version"""

SYSTEM_HEADERS = frozenset(
    [f"{name}.h" for name in (*_C.split(), *_POSIX.split())] + _CXX.split()
)


def is_system_header(include: str) -> bool:
    """Is `include` (as an `#include` spells it) a standard or POSIX header's name?"""
    return include in SYSTEM_HEADERS
