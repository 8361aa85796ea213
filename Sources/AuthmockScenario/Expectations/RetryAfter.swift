import AuthmockFileFormat
import AuthmockModel
import DriverProtocol
import Foundation

/// `retry_after: {min_seconds: N}`: a call that met 429 or 503 was sent
/// again, and not before N server-clock seconds had passed.
struct RetryAfterExpectation: Expectation {
    static let key = "retry_after"
    static let shape = Shape.object(
        ObjectSpec(
            "retry_after",
            [
                Field(
                    "min_seconds", .number(minimum: 0), required: true,
                    "server-clock seconds between an answer with Retry-After and the next attempt of that call")
            ]))
    static let doc =
        "`{min_seconds: N}`: a call met 429/503, was sent again (when it ended ok), and not before N server-clock seconds"
    static let rule = Rules.retryAfter
    let minimum: Double

    init(_ value: SpecValue, checker: SpecChecker) throws(ScenarioError) { minimum = value.object?["min_seconds"]?.number ?? 0 }

    func judge(_ observation: Observation) -> Judgement {
        var met: [JournalEntry] = []
        var early: [JournalEntry] = []
        var notRetried: [JournalEntry] = []
        for record in observation.calls {
            let tries = observation.attempts(of: record.call)
            for (index, attempt) in tries.enumerated() where [429, 503].contains(attempt.status) {
                met.append(attempt)
                guard index + 1 < tries.count else {
                    // Giving up is the application's business; a call that claims success was not retried.
                    if record.outcome == OutcomeKind.ok.rawValue { notRetried.append(attempt) }
                    continue
                }
                let next = tries[index + 1]
                if next.virtualTime.timeIntervalSince(attempt.virtualTime) + 0.05 < minimum { early.append(contentsOf: [attempt, next]) }
            }
        }
        if met.isEmpty {
            return Judgement(
                passed: false, message: "no call met a 429 or 503, so Retry-After was never tested (the call never reached the wire)",
                evidence: observation.lines(observation.resources))
        }
        if !notRetried.isEmpty {
            return Judgement(
                passed: false,
                message:
                    "a call that met 429/503 was never sent again, yet the application was told it succeeded: journal \(observation.seqs(notRetried))",
                evidence: observation.lines(notRetried))
        }
        return Judgement(
            passed: early.isEmpty,
            message: early.isEmpty
                ? "every retry after 429/503 waited at least \(minimum) s"
                : "expected at least \(minimum) s between an answer with Retry-After and the next attempt; journal \(observation.seqs(early))",
            evidence: observation.lines(early))
    }
}
