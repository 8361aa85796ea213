import AuthmockModel
/// `superfluous_refreshes`: refreshes the client had no reason to make,
/// judged one by one from what it had been told (see `RefreshNecessity`).
/// This, not a count, is how "refresh once" is judged: a client that needed
/// a second refresh because a token really died is not blamed for it.
struct SuperfluousRefreshesExpectation: CountingExpectation {
    static let key = "superfluous_refreshes"
    static let shape = CountRange.shape
    static let doc =
        "refreshes the client had no reason to make: another refresh of the login was in flight, the server had already refused the login's refresh, or the client held a live, never rejected token with more than max(60 s, half its lifetime) left. How \"refresh once\" is judged"
    static let rule = Rules.singleFlight
    let range: CountRange

    func judge(_ observation: Observation) -> Judgement {
        let judged = RefreshNecessity.judge(observation)
        let superfluous = judged.filter { $0.kind == .superfluous }
        let tally = [RefreshJudgement.Kind.necessary, .early, .superfluous, .unknown].compactMap { kind -> String? in
            let n = judged.filter { $0.kind == kind }.count
            return n == 0 ? nil : "\(n) \(kind.rawValue)"
        }.joined(separator: ", ")
        var message = "expected \(range.text) superfluous refresh\(range.max == 1 ? "" : "es"), saw \(superfluous.count)"
        if !judged.isEmpty { message += " (of \(judged.count) refresh\(judged.count == 1 ? "" : "es"): \(tally))" }
        if let first = superfluous.first { message += "; #\(first.entry.seq): \(first.reason)" }
        let evidence = judged.prefix(12).map { "\(observation.line($0.entry))  [\($0.kind.rawValue): \($0.reason)]" }
        return Judgement(
            passed: range.admits(superfluous.count), message: message, evidence: evidence,
            measured: [range.measure("superfluous refreshes", saw: superfluous.count)], entries: superfluous.map(\.entry.seq))
    }
}
