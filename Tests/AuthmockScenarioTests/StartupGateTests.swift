@testable import AuthmockScenario
import Synchronization

private final class Occupancy: Sendable {
    let counts = Mutex((now: 0, most: 0))
}
import Testing

/// Driver starts pass the gate a few at a time; a pass leaves once, even
/// when it is dropped without leaving (a case that failed before hello).
@Suite struct StartupGateTests {
    @Test func noMoreThanTheLimitStartAtOnce() async {
        let gate = StartupGate(limit: 2)
        let inside = Occupancy()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    let pass = await gate.enter()
                    inside.counts.withLock {
                        $0.now += 1; $0.most = max($0.most, $0.now)
                    }
                    try? await Task.sleep(for: .milliseconds(5))
                    inside.counts.withLock { $0.now -= 1 }
                    pass.leave()
                    pass.leave()
                }
            }
        }
        #expect(inside.counts.withLock { $0.most } == 2)
    }

    @Test func aDroppedPassLeaves() async {
        let gate = StartupGate(limit: 1)
        do { _ = await gate.enter() }
        // Would wait forever if the dropped pass still held the one place.
        let pass = await gate.enter()
        pass.leave()
    }
}
