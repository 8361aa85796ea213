import AuthmockCore
import Foundation
import GraphQL
import JWTKit
import OrderedCollections
import Synchronization

/// The GraphQL schema of `/graphql`: the same small API as `/api/` (who the
/// token belongs to, a fixed item list) plus one mutation whose effect a
/// test can count. Built with GraphQLSwift; `docs/graphql.md` prints it as SDL.
enum APISchema {
    /// An item of the fixed catalogue (`/api/items` echoes, this one has data).
    static let items: [[String: any Sendable]] = [
        ["id": "item-1", "name": "Notebook", "price": 4],
        ["id": "item-2", "name": "Pencil", "price": 1],
        ["id": "item-3", "name": "Eraser", "price": 2],
    ]

    /// Longest note text `createNote` accepts.
    static let maxNoteLength = 1000

    static func make() throws -> GraphQLSchema {
        let claims = try GraphQLObjectType(
            name: "Claims", description: "The access token's JWT claims.",
            fields: [
                "iss": GraphQLField(type: GraphQLNonNull(GraphQLString)),
                "sub": GraphQLField(type: GraphQLNonNull(GraphQLString)),
                "aud": GraphQLField(type: GraphQLNonNull(GraphQLList(GraphQLNonNull(GraphQLString)))),
                "exp": GraphQLField(type: GraphQLNonNull(GraphQLFloat), description: "Expiry, seconds since 1970 (a JWT NumericDate)"),
                "iat": GraphQLField(type: GraphQLNonNull(GraphQLFloat), description: "Issued at, seconds since 1970"),
                "jti": GraphQLField(type: GraphQLNonNull(GraphQLString)),
                "sid": GraphQLField(type: GraphQLNonNull(GraphQLString), description: "The login (refresh-token family) the token belongs to"),
            ])
        let me = try GraphQLObjectType(
            name: "Me", description: "Who the access token belongs to (as `GET /api/me`).",
            fields: [
                "sub": GraphQLField(type: GraphQLNonNull(GraphQLString)),
                "clientId": GraphQLField(type: GraphQLNonNull(GraphQLString)),
                "scope": GraphQLField(type: GraphQLNonNull(GraphQLString), description: "Space-separated scopes"),
                "claims": GraphQLField(type: GraphQLNonNull(claims)),
            ])
        let item = try GraphQLObjectType(
            name: "Item",
            fields: [
                "id": GraphQLField(type: GraphQLNonNull(GraphQLID)),
                "name": GraphQLField(type: GraphQLNonNull(GraphQLString)),
                "price": GraphQLField(type: GraphQLNonNull(GraphQLInt)),
            ])
        let note = try GraphQLObjectType(
            name: "Note", description: "What `createNote` stored; `id` counts every note stored by this server run.",
            fields: [
                "id": GraphQLField(type: GraphQLNonNull(GraphQLID)),
                "text": GraphQLField(type: GraphQLNonNull(GraphQLString)),
                "author": GraphQLField(type: GraphQLNonNull(GraphQLString), description: "`sub` of the token that stored it"),
                "createdAt": GraphQLField(type: GraphQLNonNull(GraphQLString), description: "Server clock (ISO 8601) when it was stored"),
            ])
        let query = try GraphQLObjectType(
            name: "Query",
            fields: [
                "me": GraphQLField(type: GraphQLNonNull(me)) { _, _, context, _ in (context as? GraphQLExecution)?.me },
                "items": GraphQLField(type: GraphQLNonNull(GraphQLList(GraphQLNonNull(item)))) { _, _, _, _ in items },
                "item": GraphQLField(
                    type: item, description: "null, with a NOT_FOUND error beside the other fields' data, for an unknown id",
                    args: ["id": GraphQLArgument(type: GraphQLNonNull(GraphQLID))]
                ) { _, args, _, _ in
                    let id = args["id"].string ?? ""
                    guard let found = items.first(where: { $0["id"] as? String == id }) else {
                        throw FieldFailure(.notFound, "No item with id \(id)")
                    }
                    return found
                },
                "notes": GraphQLField(
                    type: GraphQLNonNull(GraphQLList(GraphQLNonNull(note))), description: "The notes this user stored, oldest first"
                ) { _, _, context, _ in
                    guard let execution = context as? GraphQLExecution else { return [] as [[String: any Sendable]] }
                    return execution.notes.list(author: execution.grant?.subject ?? "")
                },
            ])
        let mutation = try GraphQLObjectType(
            name: "Mutation",
            fields: [
                "createNote": GraphQLField(
                    type: note, description: "Stores a note and returns it. Each execution stores one: a note applied twice shows as two ids.",
                    args: ["text": GraphQLArgument(type: GraphQLNonNull(GraphQLString))]
                ) { _, args, context, _ in
                    let text = args["text"].string ?? ""
                    guard !text.isEmpty, text.count <= maxNoteLength else {
                        throw FieldFailure(.badUserInput, "text must have 1 to \(maxNoteLength) characters, got \(text.count)")
                    }
                    guard let execution = context as? GraphQLExecution, let grant = execution.grant else { return nil }
                    return execution.store(text: text, author: grant.subject)
                }
            ])
        let schema = try GraphQLSchema(query: query, mutation: mutation)
        // Validated once here: the library caches the result without a lock.
        let problems = validateSchema(schema: schema)
        guard problems.isEmpty else { throw SettingsError("GraphQL schema: \(problems.map(\.message).joined(separator: "; "))") }
        return schema
    }
}

/// A resolver's documented failure; the endpoint turns it into the error's
/// `extensions.code`.
struct FieldFailure: Error, CustomStringConvertible {
    let error: GraphQLAPIError
    let detail: String
    init(_ error: GraphQLAPIError, _ detail: String) {
        self.error = error
        self.detail = detail
    }
    var description: String { detail }
}

/// What resolvers of one request see: the token's grant and the note store,
/// and the count of mutations this request applied (for the journal).
final class GraphQLExecution: Sendable {
    let grant: AccessGrant?
    let notes: NoteStore
    let clock: VirtualClock
    private let applied = Mutex(0)

    init(grant: AccessGrant?, notes: NoteStore, clock: VirtualClock) {
        self.grant = grant
        self.notes = notes
        self.clock = clock
    }

    var mutationsApplied: Int { applied.withLock { $0 } }

    var me: [String: any Sendable]? {
        guard let grant else { return nil }
        let c = grant.claims
        let claims: [String: any Sendable] = [
            "iss": c.iss.value, "sub": c.sub.value, "aud": c.aud?.value ?? [], "exp": c.exp.value.timeIntervalSince1970,
            "iat": c.iat.value.timeIntervalSince1970, "jti": c.jti.value, "sid": c.sid,
        ]
        return ["sub": grant.subject, "clientId": c.clientID, "scope": c.scope, "claims": claims]
    }

    func store(text: String, author: String) -> [String: any Sendable] {
        applied.withLock { $0 += 1 }
        return notes.add(text: text, author: author, at: clock.now())
    }
}

/// Notes stored by `createNote`, bounded: past `limit` the oldest go.
final class NoteStore: Sendable {
    private struct State {
        var next = 1
        var notes: [[String: any Sendable]] = []
    }
    private let state = Mutex(State())
    let limit: Int

    init(limit: Int = 10_000) { self.limit = limit }

    func add(text: String, author: String, at time: Date) -> [String: any Sendable] {
        state.withLock { state in
            let note: [String: any Sendable] = [
                "id": "note-\(state.next)", "text": text, "author": author, "createdAt": time.formatted(.iso8601),
            ]
            state.next += 1
            state.notes.append(note)
            if state.notes.count > limit { state.notes.removeFirst(state.notes.count - limit) }
            return note
        }
    }

    func list(author: String) -> [[String: any Sendable]] {
        state.withLock { $0.notes.filter { $0["author"] as? String == author } }
    }
}

/// The schema as SDL, for `authmock graphql-schema`, docs/graphql.md and
/// clients' code generators.
public enum GraphQLSchemaText {
    public static func sdl() throws -> String {
        printSchema(schema: try APISchema.make()) + "\n"
    }
}
