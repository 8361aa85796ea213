import AuthmockModel
/// `attempts_per_call`: requests to the API per application call.
struct AttemptsPerCallExpectation: CountingExpectation {
    static let key = "attempts_per_call"
    static let shape = CountRange.shape
    static let doc = "requests to the API per call"
    static let rule = Rules.bounded
    let range: CountRange

    func judge(_ observation: Observation) -> Judgement {
        let own = observation.calls.filter { !Observation.target(of: $0.spec.path).foreign }
        let broken = own.filter { !range.admits(observation.attempts(of: $0.call).count) }
        let message =
            broken.isEmpty
            ? "every call made \(range.of("attempt"))"
            : "expected \(range.of("attempt")) per call; "
                + broken.prefix(5).map { "\($0.call) made \(observation.attempts(of: $0.call).count)" }.joined(separator: ", ")
        let attempts = broken.flatMap { observation.attempts(of: $0.call) }
        return Judgement(
            passed: broken.isEmpty, message: message, evidence: observation.lines(attempts),
            measured: own.map { range.measure("attempts of \($0.call)", saw: observation.attempts(of: $0.call).count) }, entries: attempts.map(\.seq))
    }
}
