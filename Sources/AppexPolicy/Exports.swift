// The policy model, the compiled cache and the locator live in AppexPolicyCore, which links no
// Foundation (`appex run` uses them); this module adds reading YAML. Importing AppexPolicy
// gives both.
@_exported import AppexPolicyCore
