import AuthmockServer
import AuthmockCore
import AuthmockStore
import Logging

extension ServerState {
    /// Opens what `options.state` names (`memory`, `sqlite:PATH`, a
    /// `postgres://` URL; docs/state.md) for `authmock serve` and the
    /// runner's case servers (`RunOptions.openState`): the database drivers
    /// are linked by the CLI, not by the server or the runner. `patience`: PostgreSQL's deadline in
    /// seconds when the URL sets none.
    static func open(_ options: ServerOptions, patience: Double = 1) async throws -> ServerState {
        let location = try StateLocation(parsing: options.state)
        let logger = Logger(label: "authmock.state")
        do {
            guard let store = try await location.openSQL(logger: logger, tablePrefix: options.stateTablePrefix, patience: patience) else {
                return .memory(options)
            }
            return try await .sql(store, options: options, logger: logger)
        } catch let error as TokenStoreError {
            // Most store errors start with the store's name already; a password never shows.
            let named = error.description.hasPrefix(location.description) ? error.description : "\(location): \(error.description)"
            throw StartError("--state " + named)
        }
    }
}
