import AuthmockCore
import AuthmockServer
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// `/graphql` through the real router: the schema runs, every documented
/// GraphQL error is produced, and a refused token surfaces as the dialect's
/// 401 (`graphql_auth_errors: http`) or in the body (`body`), in every dialect.
struct GraphQLTests {
    static func options(_ profile: String = "oauth2", mode: GraphQLAuthErrors = .http) -> ServerOptions {
        var options = ServerOptions(signingKey: try! SigningKey(secret: String(repeating: "g", count: 32)))
        options.profile = profile
        options.graphQLAuthErrors = mode
        return options
    }

    /// The first error's `extensions.code`.
    static func code(_ response: TestResponse) -> String? {
        let errors = (try? response.json())?["errors"] as? [[String: Any]]
        return (errors?.first?["extensions"] as? [String: Any])?["code"] as? String
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        let name: String
        let expected: GraphQLAPIError
        let mode: GraphQLAuthErrors
        let run: @Sendable (TestServer, String) async throws -> TestResponse
        var testDescription: String { name }
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(name: "body not JSON", expected: .badRequest, mode: .http) { s, t in try await s.graphQL(raw: "{nope", token: t) },
        ErrorCase(name: "no query", expected: .badRequest, mode: .http) { s, t in try await s.graphQL(raw: #"{"variables": {}}"#, token: t) },
        ErrorCase(name: "batch", expected: .badRequest, mode: .http) { s, t in try await s.graphQL(raw: #"[{"query": "{ items { id } }"}]"#, token: t)
        },
        ErrorCase(name: "variables not an object", expected: .badRequest, mode: .http) { s, t in
            try await s.graphQL(raw: #"{"query": "{ items { id } }", "variables": [1]}"#, token: t)
        },
        ErrorCase(name: "two operations, no name", expected: .badRequest, mode: .http) { s, t in
            try await s.graphQL("query A { items { id } } query B { me { sub } }", token: t)
        },
        ErrorCase(name: "GET without query", expected: .badRequest, mode: .http) { s, t in try await s.get("/graphql", bearer: t) },
        ErrorCase(name: "nesting bomb", expected: .overLimit, mode: .http) { s, t in
            try await s.graphQL(String(repeating: "{ a ", count: 5000) + String(repeating: "}", count: 5000), token: t)
        },
        ErrorCase(name: "syntax error", expected: .parseFailed, mode: .http) { s, t in try await s.graphQL("{ me { ", token: t) },
        // The document ends inside a string escape: the lexer used to trap (fuzzing found it).
        ErrorCase(name: "document ends in a \\u escape", expected: .parseFailed, mode: .http) { s, t in
            try await s.graphQL(#"{ item(id: "\u1"#, token: t)
        },
        ErrorCase(name: "document ends in a backslash", expected: .parseFailed, mode: .http) { s, t in
            try await s.graphQL(#"{ item(id: "\"#, token: t)
        },
        ErrorCase(name: "unknown field", expected: .validationFailed, mode: .http) { s, t in try await s.graphQL("{ me { password } }", token: t) },
        ErrorCase(name: "mutation over GET", expected: .mutationOverGet, mode: .http) { s, t in
            try await s.get("/graphql?query=" + formEncode(#"mutation { createNote(text: "x") { id } }"#), bearer: t)
        },
        ErrorCase(name: "expired token, body mode", expected: .unauthenticated, mode: .body) { s, t in
            _ = try await s.mock.control.expire(TokenSelector(kind: .access))
            return try await s.graphQL("{ me { sub } }", token: t)
        },
        ErrorCase(name: "read-only token writes, body mode", expected: .forbidden, mode: .body) { s, _ in
            let readOnly = try await s.login(scope: "read").access
            return try await s.graphQL(#"mutation { createNote(text: "x") { id } }"#, token: readOnly)
        },
        ErrorCase(name: "empty note", expected: .badUserInput, mode: .http) { s, t in
            try await s.graphQL(#"mutation { createNote(text: "") { id } }"#, token: t)
        },
        ErrorCase(name: "unknown item", expected: .notFound, mode: .http) { s, t in
            try await s.graphQL(#"{ me { sub } item(id: "item-9") { id } }"#, token: t)
        },
    ]

    @Test(arguments: errorCases)
    func documentedError(_ errorCase: ErrorCase) async throws {
        try await TestServer.run(Self.options(mode: errorCase.mode)) { server in
            let token = try await server.login().access
            let response = try await errorCase.run(server, token)
            let row = errorCase.expected.row
            #expect(response.status.code == row.status, "\(response.text)")
            #expect(Self.code(response) == row.code, "\(response.text)")
            #expect(response.headers[.contentType] == "application/json")
            let entry = try #require(try await server.journal().last)
            #expect(entry["errorCode"] as? String == row.code)
        }
    }

    @Test func everyDocumentedErrorIsExercised() {
        let covered = Set(Self.errorCases.map(\.expected))
        for error in GraphQLAPIError.allCases {
            #expect(covered.contains(error), "no test produces graphql \(error.row.status) \(error.row.code): \(error.row.when)")
        }
    }

    @Test func queriesRunAndMutationsAreCountedInTheJournal() async throws {
        try await TestServer.run(Self.options()) { server in
            let token = try await server.login().access
            let me = try await server.graphQL("query Who { me { sub claims { aud } } items { id } }", token: token)
            #expect(me.status == .ok)
            let data = try #require(try me.json()["data"] as? [String: Any])
            #expect((data["me"] as? [String: Any])?["sub"] as? String == "alice")
            #expect((data["items"] as? [Any])?.count == 3)
            #expect(try me.json()["errors"] == nil)

            let variables = #"{"t": "caf\u00e9"}"#
            let created = try await server.graphQL(
                raw: #"{"query": "mutation Add($t: String!) { createNote(text: $t) { id text author } }", "variables": \#(variables)}"#, token: token)
            let note = try #require((try created.json()["data"] as? [String: Any])?["createNote"] as? [String: Any])
            #expect(note["text"] as? String == "café" && note["author"] as? String == "alice")
            let listed = try await server.graphQL("{ notes { id } }", token: token)
            #expect(((try listed.json()["data"] as? [String: Any])?["notes"] as? [Any])?.count == 1)

            let entries = try await server.journal()
            #expect(entries.compactMap { $0["operation"] as? String } == ["query Who", "mutation Add", "query"])
            let mutation = try #require(entries.first { $0["operation"] as? String == "mutation Add" })
            #expect(mutation["mutationsApplied"] as? Int == 1)
            #expect(mutation["kind"] as? String == "resource")
        }
    }

    @Test func introspectionNeedsNoToken() async throws {
        try await TestServer.run(Self.options(mode: .body)) { server in
            let response = try await server.graphQL(Self.introspectionQuery, token: nil)
            #expect(response.status == .ok, "\(response.text)")
            let schema = try #require((try response.json()["data"] as? [String: Any])?["__schema"] as? [String: Any])
            let names = (schema["types"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
            #expect(names.contains("Query") && names.contains("Mutation") && names.contains("Note"))
            // Anything beyond the schema still needs one.
            let mixed = try await server.graphQL("{ __typename me { sub } }", token: nil)
            #expect(Self.code(mixed) == "UNAUTHENTICATED")
        }
    }

    /// http mode: the dialect's own refusal; body mode: 200, data null, UNAUTHENTICATED with the reason.
    @Test(arguments: Dialects.names)
    func expiredTokenInBothModes(profile: String) async throws {
        for mode in GraphQLAuthErrors.allCases {
            try await TestServer.run(Self.options(profile, mode: mode)) { server in
                let token = profile == "oauth2" ? try await server.login().access : try await server.dialectLogin(profile).access
                let fresh = try await server.graphQL("{ me { sub } }", token: token)
                #expect(fresh.status == .ok && Self.code(fresh) == nil, "\(profile) \(mode): \(fresh.text)")
                try await server.expireAccess()
                let expired = try await server.graphQL("{ me { sub } }", token: token)
                switch mode {
                case .http:
                    // The dialect's own answer: a 401 but for result-code, whose errors are 200s with a code.
                    let signal = try #require(Dialects.make(profile, options: DialectOptions())).answer(to: .accessToken(.expired)).status
                    #expect(Int(expired.status.code) == signal, "\(profile): \(expired.text)")
                    // Neither the envelope, Laravel (passport) nor API Gateway (cognito) sends a challenge with its 401.
                    let challenged = signal == 401 && !["envelope", "passport", "cognito"].contains(profile)
                    #expect((expired.headers[.wwwAuthenticate] != nil) == challenged, "\(profile)")
                case .body:
                    #expect(expired.status == .ok, "\(profile): \(expired.text)")
                    let json = try expired.json()
                    #expect(json["data"] is NSNull, "data must be null: \(expired.text)")
                    let extensions = ((json["errors"] as? [[String: Any]])?.first?["extensions"] as? [String: Any]) ?? [:]
                    #expect(extensions["code"] as? String == "UNAUTHENTICATED" && extensions["reason"] as? String == "expired", "\(expired.text)")
                }
            }
        }
    }

    /// Header rotation: the refresh token sent to /graphql renews the access
    /// token in the response header, and a dead one is refused in the body.
    @Test func headerRotationRefreshesThroughGraphQL() async throws {
        try await TestServer.run(Self.options("header-rotation", mode: .body)) { server in
            let pair = try await server.backendLogin()
            try await server.expireAccess()
            let renewed = try await server.graphQL("{ me { sub } }", token: pair.refresh)
            #expect(renewed.status == .ok && Self.code(renewed) == nil, "\(renewed.text)")
            let header = try #require(renewed.headers[.authorization])
            #expect(header.hasPrefix("Bearer "))
            let entry = try #require(try await server.journal().last)
            #expect(entry["kind"] as? String == "refresh" && entry["issuedAccess"] != nil)

            _ = try await server.mock.control.expire(TokenSelector(kind: .refresh))
            let dead = try await server.graphQL("{ me { sub } }", token: pair.refresh)
            #expect(Self.code(dead) == "UNAUTHENTICATED" && dead.text.contains("refresh_token_expired"), "\(dead.text)")
        }
    }

    @Test func docsListTheLimits() throws {
        let page = try String(contentsOf: DocExampleTests.root.appendingPathComponent("docs/graphql.md"), encoding: .utf8)
        let block = try #require(
            page.firstRange(of: "<!-- limits:begin -->\n").flatMap { start in
                page.firstRange(of: "\n<!-- limits:end -->").map { String(page[start.upperBound..<$0.lowerBound]) }
            })
        #expect(block == GraphQLLimits.markdownTable, "docs/graphql.md's limits table differs from GraphQLLimits")
    }

    @Test func docsShowTheSchema() throws {
        let page = try String(contentsOf: DocExampleTests.root.appendingPathComponent("docs/graphql.md"), encoding: .utf8)
        #expect(
            page.contains("<!-- schema:begin -->\n```graphql\n\(try GraphQLSchemaText.sdl())```\n<!-- schema:end -->"),
            "docs/graphql.md schema is stale: run scripts/regen-docs.sh")
    }

    /// The query GraphiQL and Apollo's codegen send, trimmed of descriptions.
    static let introspectionQuery = """
        query IntrospectionQuery {
          __schema {
            queryType { name } mutationType { name } subscriptionType { name }
            types { ...FullType }
            directives { name locations args { ...InputValue } }
          }
        }
        fragment FullType on __Type {
          kind name
          fields(includeDeprecated: true) { name args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
          inputFields { ...InputValue }
          interfaces { ...TypeRef }
          enumValues(includeDeprecated: true) { name isDeprecated deprecationReason }
          possibleTypes { ...TypeRef }
        }
        fragment InputValue on __InputValue { name type { ...TypeRef } defaultValue }
        fragment TypeRef on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } }
        """
}

extension TestServer {
    /// `POST /graphql` with `query` (and no variables).
    func graphQL(_ query: String, token: String?) async throws -> TestResponse {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["query": query]), as: UTF8.self)
        return try await graphQL(raw: body, token: token)
    }

    func graphQL(raw body: String, token: String?) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await send(.post, "/graphql", headers: headers, body: body)
    }
}
