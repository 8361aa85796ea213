import Synchronization

/// How many driver processes may be starting at once. A case mostly waits
/// (on holds, quiet periods, a client's clock), so many run at once; but a
/// driver's start (an interpreter importing its libraries, a JVM) is all
/// CPU. Starts pass one gate a core at a time and leave it at `hello`, so
/// sixty-four JVMs on two cores start in turn instead of stalling every
/// case's clients together.
final class StartupGate: Sendable {
    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state: Mutex<State>

    init(limit: Int) {
        state = Mutex(State(free: max(1, limit)))
    }

    /// Waits for a place; the pass leaves it once, however often it is told to.
    func enter() async -> Pass {
        await withCheckedContinuation { continuation in
            let admitted = state.withLock { state in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if admitted { continuation.resume() }
        }
        return Pass(gate: self)
    }

    fileprivate func leave() {
        let next = state.withLock { state in
            if state.waiting.isEmpty {
                state.free += 1
                return CheckedContinuation<Void, Never>?.none
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }

    /// One start's place in the gate.
    final class Pass: Sendable {
        private let gate: StartupGate
        private let left = Atomic(false)

        fileprivate init(gate: StartupGate) { self.gate = gate }

        func leave() {
            if !left.exchange(true, ordering: .acquiringAndReleasing) { gate.leave() }
        }

        deinit { leave() }
    }
}
