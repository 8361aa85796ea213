import AuthmockModel
/// `same_body_on_retry`: every attempt of a call carries the byte-identical body.
struct SameBodyOnRetryExpectation: FlagExpectation {
    static let key = "same_body_on_retry"
    static let doc = "the call was retried, and every attempt carries the byte-identical body"
    static let rule = Rules.replay
    let required: Bool

    func judgeRequired(_ observation: Observation) -> Judgement {
        let withBody = observation.callsWithBody
        let retried = withBody.filter { observation.attempts(of: $0).count >= 2 }
        // The rule is about a retry: without one there is nothing to judge.
        guard !retried.isEmpty else {
            return .nothingToJudge(
                "no call with a body was sent twice, so no retry could be compared",
                evidence: observation.lines(withBody.flatMap { observation.attempts(of: $0) }))
        }
        let broken = retried.filter { Set(observation.attempts(of: $0).map { $0.bodySHA256 ?? "(no body)" }).count > 1 }
        return Judgement(
            passed: broken.isEmpty,
            message: broken.isEmpty
                ? "every retry carried the byte-identical body"
                : "the body changed between attempts of " + broken.joined(separator: ", ") + " (compare bodySHA256 and bodyBytes)",
            evidence: broken.flatMap { observation.attempts(of: $0) }.map {
                observation.line($0) + " body=\($0.bodyBytes) bytes sha256=\(($0.bodySHA256 ?? "none").prefix(12))"
            })
    }
}
