// A test imports only AuthmockTesting: the adapter's vocabulary (DriverKit),
// a running mock and its control (AuthmockServer, AuthmockModel,
// AuthmockCore), and a case's result (AuthmockScenario) come with it.
@_exported import AuthmockCore
@_exported import AuthmockModel
@_exported import AuthmockScenario
@_exported import AuthmockServer
@_exported import DriverKit
