// tsyringe reads decorator metadata through the Reflect polyfill; it must load before any
// decorated module is evaluated.
import "reflect-metadata";
