pub mod chrome_json;
