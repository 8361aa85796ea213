import AuthmockCore
import Hummingbird
import NIOCore
import Synchronization

/// What the layers of one request tell each other: the observation
/// middleware's verdict on the presented token (so the route does not verify
/// it twice), and the route's error code and issued tokens (for the journal
/// and the log). A reference, because Hummingbird hands each layer its own
/// copy of the context.
public final class RequestNotes: Sendable {
    struct Values: Sendable {
        var errorCode: String?
        var entry: JournalEntry?
        var verification: AccessVerification?
        var issued: IssuedTokens?
    }
    private let values = Mutex(Values())

    var errorCode: String? {
        get { values.withLock { $0.errorCode } }
        set { values.withLock { $0.errorCode = newValue } }
    }

    /// The journal entry of this request, for the log line.
    var entry: JournalEntry? {
        get { values.withLock { $0.entry } }
        set { values.withLock { $0.entry = newValue } }
    }

    /// The Bearer token's verification, done once on arrival.
    var verification: AccessVerification? {
        get { values.withLock { $0.verification } }
        set { values.withLock { $0.verification = newValue } }
    }

    /// Tokens the answer hands out.
    var issued: IssuedTokens? {
        get { values.withLock { $0.issued } }
        set { values.withLock { $0.issued = newValue } }
    }
}

public struct AuthmockRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let notes = RequestNotes()
    /// The connection, so a fault rule can close it.
    let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}

extension Request {
    /// Collects the body up to the server's limit; larger bodies throw 413.
    mutating func collectText(limit: Int) async throws -> String {
        let buffer = try await collectBody(upTo: limit)
        return String(buffer: buffer)
    }
}
