import AppexSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The system calls cgroupfs needs (AppexSystem), each failure a CgroupError naming the
/// operation and the path.
typealias Sys = SystemCalls<CgroupError>
