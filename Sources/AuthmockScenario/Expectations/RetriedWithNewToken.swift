import AuthmockModel
/// `retried_with_new_token`: a call retried after a 401 (or an in-body
/// `UNAUTHENTICATED`) carries a different access token.
struct RetriedWithNewTokenExpectation: FlagExpectation {
    static let key = "retried_with_new_token"
    static let doc =
        "a call retried after a 401 (or GraphQL's `UNAUTHENTICATED` in a 200 body) carries a different access token on the retry"
    static let rule = Rules.caseReports
    let required: Bool

    func judgeRequired(_ observation: Observation) -> Judgement {
        var broken: [JournalEntry] = []
        for call in observation.callIDs {
            let tries = observation.attempts(of: call)
            guard tries.count >= 2, tries.dropLast().contains(where: \.refusedCredentials) else { continue }
            if tries.last?.accessToken?.id == tries.first?.accessToken?.id { broken.append(contentsOf: tries) }
        }
        return Judgement(
            passed: broken.isEmpty,
            message: broken.isEmpty
                ? "every retry after a 401 carried a new access token" : "a call was retried with the same access token that got 401",
            evidence: observation.lines(broken))
    }
}
