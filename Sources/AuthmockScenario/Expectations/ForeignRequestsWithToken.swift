import AuthmockModel

/// `foreign_requests_with_token`: requests to another host that carried Authorization.
struct ForeignRequestsWithTokenExpectation: CountingExpectation {
    static let key = "foreign_requests_with_token"
    static let shape = CountRange.shape
    static let doc = "a request reached the other host (`//foreign/`), and this many carried Authorization"
    static let rule = Rules.thirdParty
    let range: CountRange

    func judge(_ observation: Observation) -> Judgement {
        let foreign = observation.entries.filter(observation.isForeign)
        let leaked = foreign.filter(\.presentsAuthorization)
        // No verdict without evidence: the case is about a request that must have been sent.
        if foreign.isEmpty {
            return .nothingToJudge("the client sent no request to the other host, so there is nothing to judge (the call never reached the wire)")
        }
        return Judgement(
            passed: range.admits(leaked.count),
            message: "expected \(range.of("request")) to another host carrying Authorization, saw \(leaked.count) (of \(foreign.count) sent there)",
            evidence: observation.lines(leaked), measured: [range.measure("requests to another host with a token", saw: leaked.count)],
            entries: leaked.map(\.seq))
    }
}
