import AuthmockCore
import HTTPTypes
import Hummingbird
import Synchronization

/// What a handler learned about a request, for the middleware that logs it
/// (and later journals it). A reference, because Hummingbird hands each
/// layer its own copy of the context.
public final class RequestNotes: Sendable {
    struct Values: Sendable {
        var errorCode: String?
        var credential: String?
    }
    private let values = Mutex(Values())

    var errorCode: String? {
        get { values.withLock { $0.errorCode } }
        set { values.withLock { $0.errorCode = newValue } }
    }

    /// Short description of the presented credential, e.g. `access:<jti> expired`.
    var credential: String? {
        get { values.withLock { $0.credential } }
        set { values.withLock { $0.credential = newValue } }
    }
}

public struct AuthmockRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let notes = RequestNotes()

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
    }
}

extension Request {
    /// Collects the body up to the server's limit; larger bodies throw 413.
    mutating func collectText(limit: Int) async throws -> String {
        let buffer = try await collectBody(upTo: limit)
        return String(buffer: buffer)
    }
}
