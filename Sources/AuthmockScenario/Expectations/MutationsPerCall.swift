import AuthmockModel
import Foundation

/// `mutations_per_call`: how many times the server applied a GraphQL
/// mutation call, over all its attempts. A retry after an in-body
/// `UNAUTHENTICATED` must apply it once: not twice (the refused attempt ran
/// nothing), not never.
struct MutationsPerCallExpectation: CountingExpectation {
    static let key = "mutations_per_call"
    static let shape = CountRange.shape
    static let doc =
        "times the server applied each GraphQL mutation call over all its attempts (the journal's `mutationsApplied`): `1` says a refused mutation was retried and applied exactly once"
    static let rule = "a retry repeats the operation once: a mutation the server refused was not applied, and is applied exactly once by the retry"
    let range: CountRange

    /// Whether a call's spec is a GraphQL mutation.
    static func isMutation(_ spec: CallSpec) -> Bool {
        guard spec.graphQL, let body = spec.body,
            let object = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any],
            let query = object["query"] as? String
        else { return false }
        return query.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("mutation")
    }

    func judge(_ observation: Observation) -> Judgement {
        let mutations = observation.calls.filter { Self.isMutation($0.spec) }
        guard !mutations.isEmpty else { return .nothingToJudge("the case sent no GraphQL mutation, so there is nothing to count") }
        func applied(_ call: String) -> Int { observation.attempts(of: call).reduce(0) { $0 + ($1.mutationsApplied ?? 0) } }
        let broken = mutations.filter { !range.admits(applied($0.call)) }
        return Judgement(
            passed: broken.isEmpty,
            message: broken.isEmpty
                ? "every mutation was applied \(range.text) times"
                : "expected each mutation applied \(range.text) times; "
                    + broken.prefix(5).map { "\($0.call) was applied \(applied($0.call))" }.joined(separator: ", "),
            evidence: observation.lines(broken.flatMap { observation.attempts(of: $0.call) }),
            measured: mutations.map { range.measure("mutations applied by \($0.call)", saw: applied($0.call)) })
    }
}
