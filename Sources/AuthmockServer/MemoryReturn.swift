import CSystemMemory
import AuthmockCore
public import ServiceLifecycle

/// Hands memory that pruning freed back to the system. glibc keeps freed
/// blocks in its per-thread arenas and returns only the top of each heap on
/// its own, so a long run at full refresh rate (records freed in the middle
/// of the heap by every pruning pass) kept growing in RSS though its live
/// state was bounded (bench/soak.sh). Every `interval` of real time, when a
/// pruning pass ran since the last look, `malloc_trim` releases the free
/// pages. Real time, not the virtual clock: this is about the process, not
/// about any token's lifetime.
public struct MemoryReturn: Service {
    let mock: Authmock
    let interval: Duration

    public init(mock: Authmock, interval: Duration = .seconds(10)) {
        self.mock = mock
        self.interval = interval
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown { await watch() }
    }

    private func watch() async {
        var passesSeen = (try? await mock.authority.prunedCounts().passes) ?? 0
        while !Task.isCancelled {
            do { try await Task.sleep(for: interval) } catch { return }
            guard let passes = try? await mock.authority.prunedCounts().passes else { continue }
            guard passes != passesSeen else { continue }
            passesSeen = passes
            Self.trim()
        }
    }

    static func trim() {
        #if os(Linux)
            _ = malloc_trim(0)
        #endif
    }
}
