import AuthmockModel
import DriverProtocol
/// Checks every case makes whatever its expectations say, because a verdict
/// needs evidence: an application that was told an HTTP answer arrived must
/// have had a request on the wire that got that answer, and every attempt of
/// a call carries the headers the application set. A driver that answers
/// without sending, or hides what it got, passes no case this way; and a
/// client that drops the app's headers on a retry is seen, not mistaken for
/// a call that needed one attempt.
enum CallEvidence {
    static func findings(_ observation: Observation) -> [Finding] {
        [wire(observation), headers(observation)].compactMap { $0 }
    }

    /// `calls_on_the_wire`: ok and http_error outcomes are backed by an attempt
    /// with that status, or by a refresh answer with it (a recipe that rejects
    /// the call with its refresh's error, as axios interceptors do, is honest).
    static func wire(_ observation: Observation) -> Finding? {
        var problems: [String] = []
        var evidence: [String] = []
        let refreshAnswers = observation.entries.filter { $0.kind == .refresh && !Observation.isForeign($0) }
        // `refresh_failed`: the call never went out, a refresh before it failed; that refresh is the evidence.
        for record in observation.calls where record.outcome == OutcomeKind.refreshFailed.rawValue {
            let status = record.answer?.status
            let backed = refreshAnswers.contains { entry in
                if let status { return entry.status == status && !entry.undelivered }
                return entry.undelivered || entry.failed
            }
            if !backed {
                problems.append(
                    "\(record.call) ended refresh_failed\(status.map { " \($0)" } ?? "") but no refresh was answered \(status.map(String.init) ?? "with a failure") (refreshes got \(refreshAnswers.map { String($0.status) }.joined(separator: ", ")))"
                )
                evidence += observation.lines(refreshAnswers)
            }
        }
        for record in observation.calls where [OutcomeKind.ok.rawValue, OutcomeKind.httpError.rawValue].contains(record.outcome) {
            let attempts = observation.anyAttempts(of: record.call)
            guard !attempts.isEmpty else {
                // Renewing before sending, failed, may be answered `http_error` with the
                // refresh's status by a driver that cannot say `refresh_failed` (the protocol allows it).
                let renewingFailed =
                    record.outcome == OutcomeKind.httpError.rawValue
                    && refreshAnswers.contains { $0.status == record.answer?.status && !$0.undelivered && $0.failed }
                if !renewingFailed { problems.append("\(record.call) ended \(record.outcome) but no request of it reached the server") }
                continue
            }
            guard let status = record.answer?.status else { continue }
            let delivered = attempts.filter { !$0.undelivered }
            if !delivered.contains(where: { $0.status == status }) && !refreshAnswers.contains(where: { $0.status == status && !$0.undelivered }) {
                problems.append(
                    "\(record.call) ended \(record.outcome) \(status) but the server never answered it \(status) (its attempts got \(delivered.map { String($0.status) }.joined(separator: ", ")))"
                )
                evidence += observation.lines(attempts)
            }
        }
        guard !observation.calls.isEmpty else { return nil }
        evidence = Array(evidence.prefix(12))
        return Finding(
            expectation: "calls_on_the_wire", passed: problems.isEmpty,
            message: problems.isEmpty
                ? "every answer the application got came from a request on the wire" : problems.prefix(5).joined(separator: "; "),
            evidence: problems.isEmpty ? [] : evidence, rule: Rules.protocolV1, level: Scenario.Level.must.rawValue)
    }

    /// `app_headers`: no attempt lost the application's headers (X-Authmock-Call among them).
    static func headers(_ observation: Observation) -> Finding? {
        let untagged = observation.untagged
        guard !untagged.isEmpty else { return nil }
        let attributed = untagged.compactMap { observation.attributed[$0.seq] }
        var message =
            "\(untagged.count) request\(untagged.count == 1 ? "" : "s") to the API arrived without the headers the application set (X-Authmock-Call among them): journal \(observation.seqs(untagged))"
        if !attributed.isEmpty { message += "; attributed by timing and request line to \(Set(attributed).sorted().joined(separator: ", "))" }
        return Finding(
            expectation: "app_headers", passed: false, message: message, evidence: observation.lines(untagged),
            rule: Rules.replay, level: Scenario.Level.must.rawValue)
    }
}
