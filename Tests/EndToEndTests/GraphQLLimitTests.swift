import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// The reliability probe's GraphQL requests, sent unauthenticated to the real
/// binary: each is refused with the documented `GRAPHQL_LIMIT_EXCEEDED` (400)
/// quickly, and the server still answers afterwards. Before the limits, the
/// first one segfaulted the server and the second took seconds per level.
@Suite(.timeLimit(.minutes(3)))
struct GraphQLLimitTests {
    static func post(_ client: TestClient, _ json: String) async throws -> TestClient.Response {
        try await client.post("/graphql", headers: [.contentType: "application/json"], body: ByteBuffer(string: json))
    }

    static func code(_ response: TestClient.Response) throws -> String? {
        let errors = try response.json()["errors"] as? [[String: Any]]
        return (errors?.first?["extensions"] as? [String: Any])?["code"] as? String
    }

    static func jsonString(_ text: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [text], options: .fragmentsAllowed), as: UTF8.self).dropFirst().dropLast()
            .description
    }

    /// An object literal `{a:{a:...1...}}` nested `depth` levels.
    static func literal(_ depth: Int) -> String { String(repeating: "{a:", count: depth) + "1" + String(repeating: "}", count: depth) }

    /// Probe requests, each over one limit; `seconds` is a bound far above
    /// what a refusal costs and far below what the unguarded request took.
    static let overLimit: [(name: String, body: String)] = {
        let deep = String(repeating: "a{", count: 1000) + "a" + String(repeating: "}", count: 1000)
        // 218 bytes that used to cost 2^28 decodings.
        let deepVariables = String(repeating: #"{"a":"#, count: 28) + "1" + String(repeating: "}", count: 28)
        let aliases = (0..<3600).map { "a\($0): __typename" }.joined(separator: " ")
        let skips = "{ __typename " + String(repeating: "@skip(if: false) ", count: 3500) + "}"
        var bomb = "query { ...F0 } "
        for level in 0..<20 { bomb += "fragment F\(level) on Query { ...F\(level + 1) ...F\(level + 1) } " }
        bomb += "fragment F20 on Query { __typename }"
        return [
            ("a block string with a quote hides 1,000 levels", #"{"query": \#(jsonString(#"{ __typename(x: """a"b""") "# + deep + " }"))}"#),
            ("variables nested 28 deep", #"{"query": "{ __typename }", "variables": \#(deepVariables)}"#),
            ("3,600 aliases", #"{"query": \#(jsonString("{ " + aliases + " }"))}"#),
            ("3,500 directives", #"{"query": \#(jsonString(skips))}"#),
            ("a fragment bomb (2^20 fields)", #"{"query": \#(jsonString(bomb))}"#),
            // A literal printed into a validation message at a cost that doubled per level (54: 1 s, 63: minutes).
            ("a directive's literal nested 63 deep", #"{"query": \#(jsonString("{ __typename @include(if: " + literal(63) + ") }"))}"#),
            ("a variable default nested 56 deep", #"{"query": \#(jsonString("query Q($v: Boolean = " + literal(56) + ") { __typename }"))}"#),
            (
                "a list literal nested 60 deep",
                #"{"query": \#(jsonString("{ __typename @skip(if: " + String(repeating: "[", count: 60) + String(repeating: "]", count: 60) + ") }"))}"#
            ),
            (
                "500 nested arrays in variables",
                #"{"query": "{ __typename }", "variables": {"v": \#(String(repeating: "[", count: 500) + String(repeating: "]", count: 500))}}"#
            ),
        ]
    }()

    @Test func probeRequestsAreRefusedCheaplyAndTheServerLives() async throws {
        let server = try ServingBinary()
        try await server.withClient { client in
            for probe in Self.overLimit {
                let started = ContinuousClock.now
                let response = try await Self.post(client, probe.body)
                let took = ContinuousClock.now - started
                #expect(response.status == .badRequest, "\(probe.name)")
                #expect(try Self.code(response) == "GRAPHQL_LIMIT_EXCEEDED", "\(probe.name): \(String(buffer: response.body ?? ByteBuffer()))")
                // Refused before any work: the probes cost minutes unbounded; 10 s leaves room for a loaded machine.
                #expect(took < .seconds(10), "\(probe.name) took \(took)")
                let health = try await client.get("/health")
                #expect(health.status == .ok, "the server answers after \(probe.name)")
            }
            // The same over GET, where `+` in the query string is a space.
            let deep = String(repeating: "a{", count: 1000) + "a" + String(repeating: "}", count: 1000)
            let query = #"{+__typename(x:+"""a"b""")+"# + deep + "+}"
            let get = try await client.get("/graphql?query=" + query.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(["+"]))!)
            #expect(get.status == .badRequest)
            #expect(try Self.code(get) == "GRAPHQL_LIMIT_EXCEEDED")
            let plus = try await client.get("/graphql?query=%7B+__typename+%7D")
            #expect(plus.status == .ok, "a `+` in the query string is a space")
        }
        let exit = server.interrupt()
        #expect(exit.status == 0, "graceful shutdown: \(exit.stderr)")
    }

    /// What real tools send stays under every limit: GraphiQL's and Apollo's
    /// introspection query (13 fields deep, fragments) runs without a token.
    @Test func theIntrospectionQueryIsUnderTheLimits() async throws {
        let server = try ServingBinary()
        try await server.withClient { client in
            let response = try await Self.post(client, #"{"query": \#(Self.jsonString(Self.introspectionQuery))}"#)
            #expect(response.status == .ok, "\(String(buffer: response.body ?? ByteBuffer()))")
            let data = try response.json()["data"] as? [String: Any]
            #expect(data?["__schema"] != nil)
        }
        _ = server.interrupt()
    }

    /// graphql-js's `getIntrospectionQuery()` with its defaults.
    static let introspectionQuery = """
        query IntrospectionQuery {
          __schema {
            queryType { name }
            mutationType { name }
            subscriptionType { name }
            types { ...FullType }
            directives { name description locations args { ...InputValue } }
          }
        }
        fragment FullType on __Type {
          kind name description
          fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
          inputFields { ...InputValue }
          interfaces { ...TypeRef }
          enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
          possibleTypes { ...TypeRef }
        }
        fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
        fragment TypeRef on __Type {
          kind name
          ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } }
        }
        """
}
