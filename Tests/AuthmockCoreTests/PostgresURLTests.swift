@testable import AuthmockStore
import Logging
import Testing

/// `--state postgres://...` as written by hand: an IPv6 address in
/// brackets reaches the resolver without them ("unknown host [::1]" before).
struct PostgresURLTests {
    @Test(arguments: [
        ("postgres://authmock@[::1]:5433/tokens", "::1", 5433), ("postgres://authmock@127.0.0.1/tokens", "127.0.0.1", 5432),
        ("postgresql://u:secret@db.internal:6000/x?sslmode=disable", "db.internal", 6000),
    ])
    func theHostIsTheAddressItNames(url: String, host: String, port: Int) throws {
        let database = try PostgresDatabase(url: url, logger: Logger(label: "test"))
        #expect(database.configuration.host == host)
        #expect(database.configuration.port == port)
        #expect(!database.name.contains("secret"), "the password is not in the store's name")
    }
}
